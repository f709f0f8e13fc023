// Loads a page patchgrade wrote into headless Chromium (Debian's, driven by playwright-core)
// and reports what a person would see and do there, as JSON on stdout:
//
//   node check.cjs PAGE.html SCREENSHOT.png
//
// console errors and failed or outgoing requests, the grid's cells, the task table's order
// after sorting by a column twice, the rows left by a text filter and by an outcome filter,
// whether a task's link opens its verdict, and a full-page screenshot.
const path = require('path');
const { chromium } = require(path.join(process.env.PATCHGRADE_JS_MODULES, 'playwright-core'));

(async () => {
  const [page_file, shot] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
           '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  await page.goto('file://' + path.resolve(page_file));
  const cells = await page.$$eval('td[data-cell]', (tds) =>
    Object.fromEntries(tds.map((td) => [td.dataset.cell, Number(td.querySelector('.count').textContent)])));
  const rows = () => page.$$eval('#tasks tbody tr', (rs) =>
    rs.filter((r) => !r.hidden).map((r) => r.cells[0].textContent));
  const result = { errors, requests, cells, title: await page.title() };
  const sortBy = async (label) => {
    const th = page.locator('#tasks thead th', { hasText: label });
    await th.locator('button').click();
    const once = await rows();
    await th.locator('button').click();
    return [once, await rows()];
  };
  [result.by_task_asc, result.by_task_desc] = await sortBy('task');
  [result.by_p2p_asc, result.by_p2p_desc] = await sortBy('P2P');
  await page.fill('#filter', process.env.FILTER || '');
  result.filtered = await rows();
  result.shown = await page.textContent('#shown');
  await page.fill('#filter', '');
  await page.selectOption('#outcome', process.env.OUTCOME || 'regression');
  result.by_outcome = await rows();
  await page.selectOption('#outcome', '');
  const link = page.locator('#tasks tbody tr:not([hidden]) a').first();
  const target = (await link.getAttribute('href')).slice(1);
  await link.click();
  result.opened = await page.$eval('#' + target, (d) => d.open);
  result.opened_text = await page.$eval('#' + target, (d) => d.textContent);
  result.matrix = await page.$$eval('table.matrix td.worse:not(.zero), table.matrix td.safer:not(.zero)',
    (tds) => tds.map((td) => [td.className.split(' ')[0], td.dataset.from, td.dataset.to, Number(td.textContent)]));
  await page.screenshot({ path: shot, fullPage: true });
  await browser.close();
  console.log(JSON.stringify(result));
})().catch((e) => { console.error(e); process.exit(1); });
