//! `report --format html` and `compare --format html`: one self-contained page (no network,
//! no external file) a person would rather look at than read: the 3×3 grid as a heat map,
//! the rates with their intervals, a comparison's transitions, and every task in a table that
//! sorts and filters, each opening onto its verdict.

use super::summary::pct;
use crate::harness::compare::Comparison;
use crate::harness::results::id;
use crate::harness::summary::{Rate, Summary};
use crate::judge::verdict::{Effect, GradedTest, Level, Outcome, Verdict};
use std::fmt::Write;

/// The page of one run.
pub fn report(s: &Summary, verdicts: &[Verdict], title: &str) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><h1>patchgrade: {}</h1><p class=lead>{} tasks</p></header>",
        esc(title),
        s.tasks
    );
    body.push_str("<section class=rates>");
    rate(&mut body, "Resolve rate", &s.resolve_rate, "resolve-rate");
    rate(
        &mut body,
        "Regression share of the applied, unresolved patches",
        &s.regression_share,
        "regression-share",
    );
    if s.swebench_resolved != s.resolve_rate.count as usize {
        let _ = write!(
            body,
            "<div class=rate><span class=label>SWE-bench's rules resolve</span><span class=value>{}</span></div>",
            s.swebench_resolved
        );
    }
    body.push_str("</section><section class=grids>");
    grid(&mut body, s);
    outside(&mut body, s);
    body.push_str("</section>");
    findings(&mut body, s);
    tasks_table(
        &mut body,
        verdicts.iter().map(|v| (v, None)).collect(),
        false,
    );
    details(&mut body, verdicts);
    page(title, &body)
}

/// The page of two runs compared, run A's verdicts and run B's.
pub fn compare(c: &Comparison, a: &[Verdict], b: &[Verdict]) -> String {
    let [na, nb] = &c.names;
    let title = format!("{na} → {nb}");
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><h1>patchgrade compare: {}</h1><p class=lead>{} tasks in both runs ({} only in {}, {} only in {})</p></header>",
        esc(&title),
        c.tasks,
        c.only_a.len(),
        esc(na),
        c.only_b.len(),
        esc(nb)
    );
    body.push_str("<section class=rates>");
    for (name, p) in [("Resolved", &c.resolved), ("Regression", &c.regression)] {
        let _ = write!(
            body,
            "<div class=rate data-paired=\"{}\"><span class=label>{name}</span><span class=value>{} → {}</span><span class=ci>+{} −{}, exact McNemar p = {:.4}</span></div>",
            name.to_lowercase(),
            p.a,
            p.b,
            p.gained.len(),
            p.lost.len(),
            p.p_value
        );
    }
    body.push_str("</section>");
    if !c.safer.is_empty() || !c.worse.is_empty() {
        body.push_str("<section class=calls>");
        if !c.safer.is_empty() {
            let _ = write!(
                body,
                "<p class=safer>✓ Safer, Regression → No-Op: {} ({})</p>",
                c.safer.len(),
                esc(&c.safer.join(", "))
            );
        }
        if !c.worse.is_empty() {
            let _ = write!(
                body,
                "<p class=worse>⚠ Worse, No-Op → Regression: {} ({})</p>",
                c.worse.len(),
                esc(&c.worse.join(", "))
            );
        }
        body.push_str("</section>");
    }
    matrix(&mut body, c);
    net(&mut body, c);
    let (da, db) = &c.downstream_breakage;
    if !da.is_empty() || !db.is_empty() {
        let _ = write!(
            body,
            "<p class=downstream>Downstream breakage (tests outside the task's lists): {} {}, {} {}</p>",
            esc(na),
            da.len(),
            esc(nb),
            db.len()
        );
    }
    let by_a: std::collections::BTreeMap<&str, &Verdict> = a.iter().map(|v| (id(v), v)).collect();
    let rows: Vec<(&Verdict, Option<Outcome>)> = b
        .iter()
        .filter_map(|v| Some((v, Some(by_a.get(id(v))?.outcome))))
        .collect();
    tasks_table(&mut body, rows, true);
    details(&mut body, b);
    page(&title, &body)
}

fn rate(out: &mut String, label: &str, r: &Rate, key: &str) {
    let _ = write!(
        out,
        "<div class=rate data-rate=\"{key}\"><span class=label>{}</span><span class=value>{}</span><span class=ci>{} of {}; 95% CI {}–{}</span></div>",
        esc(label),
        pct(r.rate),
        r.count,
        r.of,
        pct(r.low),
        pct(r.high)
    );
}

/// The 3×3 grid, each cell shaded by its share of the tasks.
fn grid(out: &mut String, s: &Summary) {
    let max = s.grid.iter().flatten().copied().max().unwrap_or(0).max(1);
    out.push_str("<table class=grid><caption>Outcome grid</caption><tr><th></th><th>all P2P</th><th>some P2P</th><th>no P2P</th></tr>");
    for (f, row) in Level::ALL.iter().zip(["all F2P", "some F2P", "no F2P"]) {
        let _ = write!(out, "<tr><th>{row}</th>");
        for p in Level::ALL {
            let o = Outcome::from_grid(*f, p);
            let n = s.grid[f.index()][p.index()];
            let share = if s.tasks == 0 {
                0.0
            } else {
                n as f64 / s.tasks as f64
            };
            let _ = write!(
                out,
                "<td class=\"cell {}\" style=\"--heat:{:.3}\" data-cell=\"{}-{}\" data-count=\"{n}\"><span class=name>{}</span><span class=count>{n}</span><span class=share>{}</span></td>",
                tone(o),
                n as f64 / max as f64,
                name(*f),
                name(p),
                o.title(),
                pct(share)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

fn name(l: Level) -> &'static str {
    match l {
        Level::All => "all",
        Level::Some => "some",
        Level::None => "none",
    }
}

/// The outcomes outside the grid.
fn outside(out: &mut String, s: &Summary) {
    out.push_str("<table class=outside><caption>Outside the grid</caption>");
    for c in s.counts.iter().filter(|c| c.outcome.cell().is_none()) {
        let _ = write!(
            out,
            "<tr data-outcome=\"{}\"><th>{}</th><td class=count>{}</td><td>{}</td></tr>",
            c.outcome.name(),
            c.outcome.title(),
            c.count,
            pct(c.share)
        );
    }
    if !s.incomplete.is_empty() {
        let _ = write!(
            out,
            "<tr data-outcome=incomplete><th>Incomplete (no result)</th><td class=count>{}</td><td></td></tr>",
            s.incomplete.len()
        );
    }
    out.push_str("</table>");
}

fn findings(out: &mut String, s: &Summary) {
    let mut items: Vec<String> = Vec::new();
    if let Some(line) = super::summary::downstream_line(s) {
        items.push(esc(&line));
    }
    if s.broken_at_base_tasks > 0 {
        items.push(format!(
            "Broken at base: {} task(s), {} P2P test(s) left out",
            s.broken_at_base_tasks, s.broken_at_base_tests
        ));
    }
    for (label, ids) in [
        ("Suspect tasks", &s.suspect_tasks),
        ("Broken tasks (baseline not judged)", &s.broken_tasks),
        ("Incomplete", &s.incomplete),
    ] {
        if !ids.is_empty() {
            items.push(format!("{label}: {}", esc(&ids.join(", "))));
        }
    }
    if items.is_empty() {
        return;
    }
    out.push_str("<section class=findings><ul>");
    for i in items {
        let _ = write!(out, "<li>{i}</li>");
    }
    out.push_str("</ul></section>");
}

/// The transition matrix, safer and worse cells marked.
fn matrix(out: &mut String, c: &Comparison) {
    let [na, nb] = &c.names;
    let _ = write!(
        out,
        "<table class=matrix><caption>Transitions: {} by row, {} by column</caption><tr><th></th>",
        esc(na),
        esc(nb)
    );
    for o in &c.outcomes {
        let _ = write!(out, "<th>{}</th>", o.title());
    }
    out.push_str("</tr>");
    for (from, row) in c.outcomes.iter().zip(&c.matrix) {
        let _ = write!(out, "<tr><th>{}</th>", from.title());
        for (to, n) in c.outcomes.iter().zip(row) {
            let class = match (from, to) {
                (Outcome::Regression, Outcome::NoOp) => "safer",
                (Outcome::NoOp, Outcome::Regression) => "worse",
                (a, b) if a == b => "same",
                _ => "moved",
            };
            let _ = write!(
                out,
                "<td class=\"{class}{}\" data-from=\"{}\" data-to=\"{}\">{n}</td>",
                if *n == 0 { " zero" } else { "" },
                from.name(),
                to.name()
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

fn net(out: &mut String, c: &Comparison) {
    let [na, nb] = &c.names;
    let _ = write!(
        out,
        "<table class=net><caption>Net change</caption><tr><th>outcome</th><th>{}</th><th>{}</th><th>change</th></tr>",
        esc(na),
        esc(nb)
    );
    for n in c
        .net
        .iter()
        .filter(|n| n.a + n.b > 0 || n.outcome == Outcome::Error)
    {
        let _ = write!(
            out,
            "<tr data-outcome=\"{}\"><th>{}</th><td>{}</td><td>{}</td><td>{:+}</td></tr>",
            n.outcome.name(),
            n.outcome.title(),
            n.a,
            n.b,
            n.change
        );
    }
    out.push_str("</table>");
}

/// Every task, sortable by any column and filtered by text and outcome.
fn tasks_table(out: &mut String, rows: Vec<(&Verdict, Option<Outcome>)>, paired: bool) {
    out.push_str("<section class=tasks><h2>Tasks</h2><div class=controls>");
    out.push_str("<input id=filter type=search placeholder=\"Filter by task, model or test\" aria-label=\"filter\">");
    out.push_str(
        "<select id=outcome aria-label=\"outcome\"><option value=\"\">every outcome</option>",
    );
    for o in Outcome::ALL.iter().chain(&Outcome::P2P_ONLY) {
        let _ = write!(out, "<option value=\"{}\">{}</option>", o.name(), o.title());
    }
    out.push_str("</select><span id=shown></span></div><table id=tasks><thead><tr>");
    let mut heads = vec![("task", false)];
    if paired {
        heads.push(("before", false));
    }
    heads.extend([
        ("outcome", false),
        ("F2P", true),
        ("P2P", true),
        ("downstream broken", true),
        ("warnings", true),
        ("model", false),
    ]);
    for (i, (h, num)) in heads.iter().enumerate() {
        let _ = write!(
            out,
            "<th data-col=\"{i}\"{}><button type=button>{h}</button></th>",
            if *num { " data-num" } else { "" }
        );
    }
    out.push_str("</tr></thead><tbody>");
    for (n, (v, before)) in rows.iter().enumerate() {
        let downstream = v.downstream.as_ref().map_or(0, |d| d.broken.len());
        let searchable: Vec<&str> = v.tests.iter().map(|t| t.id.as_str()).collect();
        let _ = write!(
            out,
            "<tr data-outcome=\"{}\" data-search=\"{}\"><td><a href=\"#v-{n}\">{}</a></td>",
            v.outcome.name(),
            esc(&format!(
                "{} {} {}",
                id(v),
                v.model_name_or_path.as_deref().unwrap_or(""),
                searchable.join(" ")
            ))
            .to_lowercase(),
            esc(id(v))
        );
        if let Some(b) = before {
            let _ = write!(out, "<td class=\"o {}\">{}</td>", tone(*b), b.title());
        }
        let _ = write!(
            out,
            "<td class=\"o {}\">{}</td><td data-v=\"{}\">{}/{}</td><td data-v=\"{}\">{}/{}</td><td>{downstream}</td><td>{}</td><td>{}</td></tr>",
            tone(v.outcome),
            v.outcome.title(),
            v.f2p.passing,
            v.f2p.passing,
            v.f2p.total,
            v.p2p.passing,
            v.p2p.passing,
            v.p2p.total,
            v.warnings.len(),
            esc(v.model_name_or_path.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</tbody></table></section>");
}

/// Each task's verdict: what failed and why, what the patch touched, what was noticed.
fn details(out: &mut String, verdicts: &[Verdict]) {
    out.push_str("<section class=verdicts><h2>Verdicts</h2>");
    for (n, v) in verdicts.iter().enumerate() {
        let _ = write!(
            out,
            "<details id=\"v-{n}\"><summary><span class=\"o {}\">{}</span> {}</summary><p>{}</p>",
            tone(v.outcome),
            v.outcome.title(),
            esc(id(v)),
            esc(&v.summary)
        );
        if let Some(e) = &v.error {
            let _ = write!(out, "<pre class=error>{}</pre>", esc(e.message.trim()));
        }
        if let Some(f) = &v.patch.apply_failure {
            let _ = write!(out, "<pre class=error>{}</pre>", esc(&f.to_string()));
        }
        let failing: Vec<&GradedTest> = v
            .tests
            .iter()
            .filter(|t| matches!(t.effect, Effect::NotFixed | Effect::Broken))
            .chain(v.downstream.iter().flat_map(|d| &d.broken))
            .collect();
        if !failing.is_empty() {
            out.push_str("<h3>Failing</h3><ul class=failing>");
            for t in failing {
                let kind = match t.effect {
                    Effect::NotFixed => "not fixed",
                    _ if v.downstream.as_ref().is_some_and(|d| d.broken.contains(t)) => {
                        "downstream, broken"
                    }
                    _ => "broken",
                };
                let _ = write!(
                    out,
                    "<li><code>{}</code> <em>{kind}, {}</em>{}</li>",
                    esc(&t.id),
                    t.status,
                    t.message
                        .as_deref()
                        .map(|m| format!("<pre>{}</pre>", esc(m)))
                        .unwrap_or_default()
                );
            }
            out.push_str("</ul>");
        }
        if !v.patch.files.is_empty() {
            let _ = write!(
                out,
                "<p>Patch touches: <code>{}</code></p>",
                esc(&v.patch.files.join(", "))
            );
        }
        if !v.warnings.is_empty() {
            out.push_str("<h3>Warnings</h3><ul>");
            for w in &v.warnings {
                let _ = write!(out, "<li>{}</li>", esc(&w.message));
            }
            out.push_str("</ul>");
        }
        out.push_str("</details>");
    }
    out.push_str("</section>");
}

/// The colour family of an outcome.
pub(super) fn tone(o: Outcome) -> &'static str {
    match o {
        Outcome::Resolved | Outcome::NoBreakage => "good",
        Outcome::PartiallyResolved => "fair",
        Outcome::BreakingResolved | Outcome::WorkInProgress => "mixed",
        Outcome::NoOp => "idle",
        Outcome::Regression | Outcome::Breaking => "bad",
        Outcome::EmptyPatch | Outcome::PatchFailed | Outcome::Error => "none",
    }
}

/// Text as HTML: the five characters that mean something there, escaped.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width\"><title>patchgrade: {}</title><style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n",
        esc(title)
    )
}

const STYLE: &str = "
:root{font-family:system-ui,sans-serif;color:#1d2330;background:#fafbfc;--good:46,160,67;--fair:120,170,60;--mixed:214,140,20;--idle:130,140,155;--bad:208,48,48;--none:150,150,150}
body{margin:0 auto;max-width:72rem;padding:1.5rem}
h1{font-size:1.5rem;margin:0}.lead{color:#555;margin:.2rem 0 1rem}
.rates{display:flex;gap:1rem;flex-wrap:wrap;margin-bottom:1rem}
.rate{background:#fff;border:1px solid #dde;border-radius:6px;padding:.6rem .9rem;display:flex;flex-direction:column}
.rate .value{font-size:1.6rem;font-weight:600}.rate .ci,.rate .label{color:#555;font-size:.85rem}
.grids{display:flex;gap:2rem;flex-wrap:wrap;align-items:flex-start}
table{border-collapse:collapse;background:#fff}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border:1px solid #dde;padding:.35rem .6rem;text-align:left}
.grid td{width:9rem;height:4.2rem;vertical-align:top}
.cell{background:rgba(var(--t),calc(.08 + .72*var(--heat)))}
.cell .name{display:block;font-size:.8rem}.cell .count{font-size:1.5rem;font-weight:600;margin-right:.4rem}.cell .share{color:#333;font-size:.85rem}
.good{--t:var(--good)}.fair{--t:var(--fair)}.mixed{--t:var(--mixed)}.idle{--t:var(--idle)}.bad{--t:var(--bad)}.none{--t:var(--none)}
td.o{color:rgb(var(--t));font-weight:600}
.matrix td{text-align:right}.matrix .zero{color:#bbb}.matrix .safer:not(.zero){background:#d7f3dc;font-weight:700}.matrix .worse:not(.zero){background:#f8d4d4;font-weight:700}.matrix .same:not(.zero){background:#f1f3f6}
.safer{color:#1f7a33}.worse{color:#b42323;font-weight:600}
.findings ul{padding-left:1.2rem}
.controls{display:flex;gap:.6rem;align-items:center;margin:.5rem 0}
#tasks{width:100%}#tasks th button{all:unset;cursor:pointer;font-weight:600}
#tasks th[aria-sort=ascending] button::after{content:' ▲'}#tasks th[aria-sort=descending] button::after{content:' ▼'}
details{background:#fff;border:1px solid #dde;border-radius:6px;margin:.4rem 0;padding:.4rem .8rem}
details[open]{box-shadow:0 0 0 2px #9cc3ff}summary{cursor:pointer}
pre{white-space:pre-wrap;background:#f4f5f7;padding:.4rem;margin:.2rem 0}pre.error{color:#8a1c1c}
";

const SCRIPT: &str = r#"
(function(){
  var table=document.getElementById('tasks');
  var body=table.tBodies[0];
  var filter=document.getElementById('filter');
  var outcome=document.getElementById('outcome');
  var shown=document.getElementById('shown');
  function apply(){
    var text=filter.value.trim().toLowerCase(), want=outcome.value, n=0;
    Array.prototype.forEach.call(body.rows,function(r){
      var ok=(!want||r.dataset.outcome===want)&&(!text||r.dataset.search.indexOf(text)>=0);
      r.hidden=!ok; if(ok){n++;}
    });
    shown.textContent=n+' of '+body.rows.length+' shown';
  }
  filter.addEventListener('input',apply);
  outcome.addEventListener('change',apply);
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th){
    th.querySelector('button').addEventListener('click',function(){
      var col=+th.dataset.col, num=th.hasAttribute('data-num');
      var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',dir===1?'ascending':'descending');
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[col], y=b.cells[col];
        if(num){return dir*((+(x.dataset.v||x.textContent))-(+(y.dataset.v||y.textContent)));}
        return dir*x.textContent.localeCompare(y.textContent);
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  function open(){
    var d=location.hash&&document.getElementById(location.hash.slice(1));
    if(d&&d.tagName==='DETAILS'){d.open=true;d.scrollIntoView();}
  }
  window.addEventListener('hashchange',open);
  open(); apply();
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }
}
