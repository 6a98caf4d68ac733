// sweepgen report page: builds every view from the JSON in #report-data with plotly.js (inlined
// above). No network: everything the page shows is in this file.
"use strict";
(function () {
  const page = JSON.parse(document.getElementById("report-data").textContent);
  const obj = page.objective;
  // a failed or pruned run's last value is shown in the table, never ranked with finished runs
  const scored = page.runs.filter((r) => r.score !== null && r.state === "finished");
  const plotConfig = { displaylogo: false, responsive: true };
  const legendOutside = { x: 1.02, xanchor: "left", y: 1, yanchor: "top" };

  function fmt(v) {
    if (v === null || v === undefined) return "–";
    if (typeof v === "number") {
      if (Number.isInteger(v)) return String(v);
      return Number(v.toPrecision(page.digits)).toString();
    }
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  // Plotly draws every text it is given (titles, legends, ticks, hovers) as a small HTML subset:
  // `<b>`, `<i>`, `<span style>`, `<a href="https://…">`. A run, group, metric or config name is
  // data another person may have written, so before it reaches Plotly its `&` and `<` are written
  // as entities, which Plotly shows as the characters they stand for: never markup, never a link.
  // (The page's own tables set textContent, which needs nothing.)
  function plain(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // -- run table with the differences-only toggle ------------------------------------------------
  function runTable() {
    const diffOnly = document.getElementById("diff-only").checked;
    const paths = diffOnly ? page.columns : page.all_columns;
    const head = ["run", "group", "state", obj.label, ...paths, "diff from base"];
    const table = el("table", { id: "runs-table" });
    const tr = el("tr");
    head.forEach((h) => tr.appendChild(el("th", {}, h)));
    table.appendChild(el("thead")).appendChild(tr);
    const body = table.appendChild(el("tbody"));
    for (const run of page.runs) {
      const row = el("tr", { class: "state-" + run.state.replace(/\W/g, "-") });
      const values = paths.map((p) => (p in run.diff ? run.diff[p] : p in run.values ? run.values[p] : page.base[p]));
      const diff = Object.entries(run.diff).map(([k, v]) => k + "=" + fmt(v)).join(", ");
      // "pruned at step 9 (asha)", as status and the trials table word it; other notes in brackets
      const note = !run.note ? "" : run.state === "pruned" ? " " + run.note : " (" + run.note + ")";
      [run.name, run.group, run.state + note, run.score, ...values, diff].forEach((v) => row.appendChild(el("td", {}, fmt(v))));
      body.appendChild(row);
    }
    const holder = document.getElementById("runs");
    holder.replaceChildren(table);
    document.getElementById("columns-shown").textContent =
      paths.length + " of " + page.all_columns.length + " config paths shown";
  }

  // -- learning curves per group, seed bands -------------------------------------------------------
  function curves() {
    const metric = document.getElementById("curve-metric").value;
    const traces = [];
    const groups = page.curves[metric] || [];
    groups.forEach((g, i) => {
      const color = "hsl(" + Math.round((i * 137.5) % 360) + ",65%,45%)";
      if (g.n > 1) {
        traces.push({ x: g.steps, y: g.low, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: g.group });
        traces.push({ x: g.steps, y: g.high, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: color.replace("hsl", "hsla").replace(")", ",0.2)"), hoverinfo: "skip", showlegend: false, legendgroup: g.group });
      }
      traces.push({ x: g.steps, y: g.mean, mode: "lines", name: plain(g.group) + " (n=" + g.n + ")", line: { color: color }, legendgroup: g.group });
    });
    const pruned = (page.pruned_curves || {})[metric] || [];
    traces.push(...prunedTraces(pruned));
    const anyBand = groups.some((g) => g.n > 1);
    const layout = {
      title: { text: plain(metric) + (anyBand ? ": mean over seeds, band min..max" : ": one run per group") +
        (pruned.length ? "; dashed: pruned runs up to their stop" : "") },
      xaxis: { title: { text: "step" }, type: document.getElementById("log-x").checked ? "log" : "linear" },
      yaxis: { title: { text: plain(metric) }, type: document.getElementById("log-y").checked ? "log" : "linear" },
      legend: legendOutside, margin: { r: 20 }, height: 460,
    };
    Plotly.react("curves", traces, layout, plotConfig);
  }

  // a search's pruned runs: each its own faded dashed line, a cross where the pruner stopped it, so a
  // reader sees where the stop came against the finished runs' curves; one legend entry for all
  function prunedTraces(pruned) {
    if (!pruned.length) return [];
    const color = "rgba(217,140,0,0.55)";
    const lines = pruned.map((c, i) => ({ x: c.steps, y: c.values, mode: "lines", name: "pruned runs (" + pruned.length + "; dashed, × = stopped)",
      line: { color: color, dash: "dash", width: 1.3 }, legendgroup: "pruned", showlegend: i === 0,
      text: c.steps.map(() => plain(c.run)), hovertemplate: "%{text} (pruned)<br>step %{x}: %{y}<extra></extra>" }));
    lines.push({ x: pruned.map((c) => c.stop[0]), y: pruned.map((c) => c.stop[1]), mode: "markers", type: "scatter",
      name: "pruned: stopped here (" + pruned.length + ")", legendgroup: "pruned", showlegend: false,
      marker: { symbol: "x", size: 8, color: "#d98c00" }, text: pruned.map((c) => plain(c.run)),
      hovertemplate: "%{text} pruned at step %{x}: %{y}<extra></extra>" });
    return lines;
  }

  // -- parallel coordinates with a top-k% filter ---------------------------------------------------
  // axes (categories, ranges, ticks) come from every scored run, so the top-k% filter keeps them still
  function axisOf(param, runs) {
    const all = scored.map((r) => r.values[param.path]);
    const raw = runs.map((r) => r.values[param.path]);
    if (param.categorical) {
      const labels = [...new Set(all.map((v) => fmt(v)))].sort();
      return { label: plain(param.path), values: raw.map((v) => labels.indexOf(fmt(v))), range: [0, Math.max(labels.length - 1, 1)], tickvals: labels.map((_, i) => i), ticktext: labels };  // ticks are drawn as text, never markup
    }
    if (param.log) {
      const lo = Math.floor(Math.log10(Math.min(...all))), hi = Math.ceil(Math.log10(Math.max(...all)));
      const ticks = [];
      for (let e = lo; e <= hi; e++) ticks.push(e);
      return { label: plain(param.path) + " (log)", values: raw.map((v) => Math.log10(v)), range: [lo, hi], tickvals: ticks, ticktext: ticks.map((e) => "1e" + e) };
    }
    return { label: plain(param.path), values: raw, range: [Math.min(...all), Math.max(...all)] };
  }
  function topRuns(percent) {
    const sorted = [...scored].sort((a, b) => (obj.mode === "max" ? b.score - a.score : a.score - b.score));
    return sorted.slice(0, Math.max(1, Math.ceil((sorted.length * percent) / 100)));
  }
  function parcoords() {
    const percent = Number(document.getElementById("topk").value);
    const runs = topRuns(percent);
    document.getElementById("topk-label").textContent =
      "top " + percent + "% by " + obj.label + ": " + runs.length + " of " + scored.length + " scored runs";
    const dims = page.params.map((p) => axisOf(p, runs));
    const scores = scored.map((r) => r.score);
    dims.push({ label: plain(obj.label), values: runs.map((r) => r.score), range: [Math.min(...scores), Math.max(...scores)] });
    const trace = {
      type: "parcoords",
      dimensions: dims,
      line: { color: runs.map((r) => r.score), cmin: Math.min(...scores), cmax: Math.max(...scores), colorscale: "Viridis", reversescale: obj.mode === "min", showscale: true, colorbar: { title: { text: plain(obj.label) } } },
    };
    Plotly.react("parcoords", [trace], { height: 420, margin: { l: 80, r: 80, t: 60 } }, plotConfig);
  }

  // -- parameter importance, scatter, statistics ---------------------------------------------------
  function importance() {
    const rows = page.importance.rows;  // [path, share, low, high]: the interval is over refits
    Plotly.newPlot("importance", [{ type: "bar", orientation: "h", x: rows.map((r) => r[1]), y: rows.map((r) => plain(r[0])),
      error_x: { type: "data", symmetric: false, array: rows.map((r) => Math.max(0, r[3] - r[1])), arrayminus: rows.map((r) => Math.max(0, r[1] - r[2])) },
      text: rows.map((r) => (100 * r[1]).toFixed(0) + "% [" + (100 * r[2]).toFixed(0) + "–" + (100 * r[3]).toFixed(0) + "%]"),
      hovertemplate: "%{y}: %{text}<extra></extra>" }],
      { height: 90 + 36 * rows.length, margin: { l: 220, t: 10, b: 50 }, xaxis: { title: { text: "importance (share)" }, range: [0, 1] }, yaxis: { autorange: "reversed" } }, plotConfig);
  }
  function scatter() {
    const holder = document.getElementById("scatter");
    page.params.filter((p) => !p.categorical).forEach((p, i) => {
      const div = holder.appendChild(el("div", { id: "scatter-" + i, class: "plot small" }));
      Plotly.newPlot(div, [{ type: "scatter", mode: "markers", x: scored.map((r) => r.values[p.path]), y: scored.map((r) => r.score), text: scored.map((r) => plain(r.name)) }],
        { height: 320, title: { text: plain(obj.label + " vs " + p.path) }, xaxis: { title: { text: plain(p.path) }, type: p.log ? "log" : "linear" }, yaxis: { title: { text: plain(obj.label) } } }, plotConfig);
    });
  }
  // -- the answer first: a forest plot of each group's difference from the baseline ----------------
  const FOREST_ROWS = 25;  // the first screen; "show all" draws every group
  const VERDICT_COLOR = { better: "#0a7a2a", worse: "#b00020", "no evidence": "#555", "cannot decide": "#c08a00" };
  let forestAll = false;
  function forestRows() {
    const rows = page.stats.forest;
    if (forestAll || rows.length <= FOREST_ROWS) return rows;
    // both ends of the effect order: the best groups and the worst ones, where the verdicts are
    const top = Math.ceil(FOREST_ROWS * 0.6);
    return [...rows.slice(0, top), ...rows.slice(rows.length - (FOREST_ROWS - top))];
  }
  function forest() {
    const s = page.stats;
    const rows = forestRows();
    const label = (r) => plain(r.name) + (r.verdict ? "  [" + r.verdict + "]" : "") + "  n=" + r.n;
    const withCi = rows.filter((r) => r.low !== null);
    const trace = {
      type: "scatter", mode: "markers", orientation: "h",
      x: rows.map((r) => r.value), y: rows.map(label),
      marker: { size: 9, color: rows.map((r) => VERDICT_COLOR[r.verdict] || "#1f5fbf") },
      error_x: { type: "data", symmetric: false, array: rows.map((r) => (r.high === null ? 0 : r.high - r.value)),
        arrayminus: rows.map((r) => (r.low === null ? 0 : r.value - r.low)), thickness: 1.5, width: 4 },
      text: rows.map((r) => r.low === null ? "no interval (one run, every run the same value, or a bootstrap with under 20 runs in a group or a tied group: see the note)" : "[" + fmt(r.low) + ", " + fmt(r.high) + "]" +
        (r.level ? " at " + (100 * r.level).toFixed(2) + "%" : "")),
      hovertemplate: "%{y}<br>%{x}<br>%{text}<extra></extra>",
    };
    const shapes = s.baseline ? [{ type: "line", xref: "x", yref: "paper", x0: 0, x1: 0, y0: 0, y1: 1, line: { color: "#888", dash: "dot" } }] : [];
    const what = s.baseline ? "difference from " + plain(s.baseline) : "mean";
    Plotly.react("forest", [trace], {
      height: 70 + 20 * rows.length, margin: { l: 10, r: 20, t: 10, b: 40 },
      xaxis: { title: { text: plain(obj.label) + ": " + what + " (" + obj.mode + " is better)" }, zeroline: false, automargin: true },
      yaxis: { autorange: "reversed", automargin: true, tickfont: { size: 12 } }, shapes: shapes, showlegend: false,
    }, plotConfig);
    const button = document.getElementById("forest-all");
    button.hidden = s.forest.length <= FOREST_ROWS;
    button.textContent = forestAll ? "show the first " + FOREST_ROWS : "show all " + s.forest.length + " groups (shown: the " + Math.ceil(FOREST_ROWS * 0.6) + " best and " + (FOREST_ROWS - Math.ceil(FOREST_ROWS * 0.6)) + " worst by effect)";
    const counts = Object.entries(s.verdicts).map(([v, n]) => n + " " + v);
    const holder = document.getElementById("verdict-counts");
    holder.replaceChildren();
    if (s.baseline) {
      holder.appendChild(el("span", {}, "against " + s.baseline + ": "));
      Object.entries(s.verdicts).forEach(([v, n], i) => {
        if (i) holder.appendChild(document.createTextNode(", "));
        holder.appendChild(el("b", { class: v.replace(" ", "-") }, n + " " + v));
      });
      holder.appendChild(document.createTextNode(" (" + s.methods.test + ", Holm, alpha " + s.methods.alpha + ")"));
    } else {
      holder.textContent = "no baseline: give --compare GROUP for verdicts";
    }
    if (s.tied_best.length > 1) holder.appendChild(el("div", { class: "note" }, "best mean: a tie between " + s.tied_best.join(", ")));
    if (!withCi.length && !counts.length) holder.appendChild(el("div", { class: "note" }, "every group has one run: no intervals"));
  }

  // the seeds needed where the true spread is at the top of its 80% interval (null beside a plug-in
  // count: more than 1,000), as statistics.csv's seeds_needed_spread_top
  function spreadTop(c) {
    if (c.seeds_needed === null || c.seeds_needed === undefined) return null;
    return c.seeds_needed_high === null || c.seeds_needed_high === undefined ? "more than 1,000" : c.seeds_needed_high;
  }

  // -- the statistics table: verdict next to the name, sortable, the first rows until "show all" -------
  const STATS_ROWS = 50;
  let statsAll = false;
  let statsSort = { key: null, dir: 1 };
  function statsTable() {
    const s = page.stats;
    const holder = document.getElementById("stats");
    const table = el("table", { id: "stats-table" });
    const cmp = Object.fromEntries(s.comparisons.map((c) => [c.name, c]));
    const cols = [["group", (g) => g.name], ...(s.baseline ? [["verdict", (g) => (cmp[g.name] ? cmp[g.name].verdict : "baseline")]] : []),
      ["n", (g) => g.n], ["mean", (g) => g.mean], ["CI (mean)", (g) => g.low]];
    if (s.baseline) {
      cols.push(["diff", (g) => (cmp[g.name] ? cmp[g.name].diff : null)], ["CI (diff)", (g) => (cmp[g.name] ? cmp[g.name].low : null)],
        ["level", (g) => (cmp[g.name] ? cmp[g.name].level : null)], ["p", (g) => (cmp[g.name] ? cmp[g.name].p : null)],
        ["p (Holm)", (g) => (cmp[g.name] ? cmp[g.name].p_holm : null)], ["seeds needed", (g) => (cmp[g.name] ? cmp[g.name].seeds_needed : null)],
        // beside the plug-in count, the count at the top of the spread's 80% interval, as the terminal and
        // statistics.csv give it: the plug-in count alone fell short of 80% power in half of 3 + 3 comparisons
        ["seeds needed (spread top)", (g) => (cmp[g.name] && cmp[g.name].seeds_needed ? (cmp[g.name].seeds_needed_high ?? Infinity) : null)]);
    }
    const tr = el("tr");
    cols.forEach(([h], i) => {
      const th = el("th", { "data-col": String(i), title: "sort" }, h + (statsSort.key === i ? (statsSort.dir > 0 ? " ▲" : " ▼") : ""));
      th.addEventListener("click", () => {
        statsSort = { key: i, dir: statsSort.key === i ? -statsSort.dir : 1 };
        statsTable();
      });
      tr.appendChild(th);
    });
    table.appendChild(el("thead")).appendChild(tr);
    let groups = [...s.groups];
    if (statsSort.key !== null) {
      const get = cols[statsSort.key][1];
      groups.sort((a, b) => {
        const x = get(a), y = get(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * statsSort.dir;
      });
    } else {
      // by effect, as the forest plot: best first in the objective's direction, the baseline on top
      const order = Object.fromEntries(s.forest.map((r, i) => [r.name, i]));
      groups.sort((a, b) => (a.name === s.baseline ? -1 : b.name === s.baseline ? 1 : order[a.name] - order[b.name]));
    }
    const shown = statsAll ? groups : groups.slice(0, STATS_ROWS);
    const body = table.appendChild(el("tbody"));
    const ci = (lo, hi) => (lo === null || lo === undefined ? "–" : "[" + fmt(lo) + ", " + fmt(hi) + "]");
    for (const g of shown) {
      const c = cmp[g.name];
      const row = el("tr");
      const cells = [[g.name], ...(s.baseline ? [[c ? c.verdict : "baseline", "verdict"]] : []), [g.n], [g.mean], [ci(g.low, g.high)]];
      if (s.baseline) {
        if (c) cells.push([c.diff], [ci(c.low, c.high)], [c.level === null ? "–" : (100 * c.level).toFixed(2) + "%"], [c.p], [c.p_holm], [c.seeds_needed], [spreadTop(c)]);
        else cells.push([""], [""], [""], [""], [""], [""], [""]);
      }
      cells.forEach(([v, cls]) => row.appendChild(el("td", cls ? { class: cls } : {}, fmt(v))));
      if (c) row.classList.add("verdict-" + c.verdict.replace(" ", "-"));
      body.appendChild(row);
    }
    holder.replaceChildren(table);
    const button = document.getElementById("stats-all");
    button.hidden = groups.length <= STATS_ROWS;
    button.textContent = statsAll ? "show the first " + STATS_ROWS : "show all " + groups.length + " groups (" + shown.length + " shown)";
    const sentences = document.getElementById("stats-sentences");
    sentences.replaceChildren();
    // written once in Python (report/undecided.py), the terminal's sentences word for word
    for (const line of s.undecided) sentences.appendChild(el("div", { class: "note" }, line));
  }

  // -- a search sweep: best-so-far curve, the best trial's diff from the base, the trials -----------
  // "best so far" counts complete trials only (report_search.py says why); pruned and failed trials
  // are their own markers and rows
  function searchCurve() {
    const s = page.search;
    const curve = s.curves.find((c) => c.key === document.getElementById("search-x").value);
    const byName = Object.fromEntries(s.trials.map((t) => [t.name, t]));
    const at = Object.fromEntries(curve.trials.map((name, i) => [name, curve.x[i]]));
    const hover = (t) => plain(t.name) + " " + t.state + (t.pruned_at !== null ? " at step " + t.pruned_at : "") + "<br>" +
      plain(s.metric) + " = " + fmt(t.value) + "<br>" + Object.entries(t.params).map(([k, v]) => plain(k + "=" + fmt(v))).join("<br>");
    function markers(state, name, marker) {
      const ts = curve.trials.map((n) => byName[n]).filter((t) => t.state === state && t.value !== null);
      return { x: ts.map((t) => at[t.name]), y: ts.map((t) => t.value), text: ts.map(hover), customdata: ts.map((t) => t.name),
        mode: "markers", type: "scatter", name: name + " (" + ts.length + ")", marker: marker, hovertemplate: "%{text}<extra></extra>" };
    }
    const traces = [
      { x: curve.x, y: curve.best, mode: "lines", type: "scatter", name: "best so far", line: { shape: "hv", width: 2.5, color: "#1f5fbf" }, connectgaps: false },
      markers("complete", "complete", { color: "#1f5fbf", size: 7 }),
      markers("pruned", "pruned: last value before the stop", { color: "#d98c00", symbol: "x", size: 8 }),
    ];
    if (s.best) {
      const b = byName[s.best.name];
      traces.push({ x: [at[b.name]], y: [b.value], mode: "markers", type: "scatter", name: "best: " + plain(b.name),
        marker: { symbol: "star", size: 15, color: "#0a7a2a", line: { color: "#fff", width: 1 } }, text: [hover(b)], hovertemplate: "%{text}<extra></extra>" });
    }
    const failed = s.trials.filter((t) => t.state === "failed").length;
    const silent = s.trials.filter((t) => t.state === "pruned" && t.value === null).length;
    const unplotted = [failed ? failed + " failed" : "", silent ? silent + " pruned before reporting" : ""].filter((w) => w);
    const layout = {
      title: { text: "best " + plain(s.metric) + " so far (" + s.mode + " is better)" + (unplotted.length ? "; no value: " + unplotted.join(", ") : "") },
      xaxis: { title: { text: plain(curve.label) }, zeroline: false }, yaxis: { title: { text: plain(s.metric) } },
      legend: legendOutside, margin: { r: 20 }, height: 440,
    };
    Plotly.react("search-curve", traces, layout, plotConfig);
  }
  function bestTrial() {
    const holder = document.getElementById("best-trial");
    const b = page.search.best;
    if (!b) {
      holder.appendChild(el("div", { class: "note" }, "no complete trial yet: no best trial"));
      return;
    }
    holder.appendChild(el("h3", {}, "Best trial: " + b.name + ", " + page.search.metric + " = " + fmt(b.value)));
    if (b.trust) holder.appendChild(el("div", { class: "note", id: "best-trust" }, b.name + ": " + b.trust));
    if (b.tied && b.tied.length) holder.appendChild(el("div", { class: "note" }, "tied with " + b.tied.join(", ") + " (the same " + page.search.metric + "): none of them is better than the others"));
    const table = el("table", { id: "best-diff" });
    const tr = el("tr");
    ["config path", "base", b.name].forEach((h) => tr.appendChild(el("th", {}, h)));
    table.appendChild(el("thead")).appendChild(tr);
    const body = table.appendChild(el("tbody"));
    for (const [path, base, value] of b.diff) {
      const row = body.appendChild(el("tr"));
      // config values exactly as configured, as `report` prints them (0.0125 stays 0.0125)
      [path, base, value].forEach((v) => row.appendChild(el("td", {}, typeof v === "number" ? String(v) : fmt(v))));
    }
    holder.appendChild(table);
    holder.appendChild(el("div", { class: "note" }, "every other config path is the base's (output_dir and run_name name the run and are left out)"));
  }
  function trialsTable() {
    const s = page.search;
    const head = ["trial", "state", s.metric + " (pruned: last reported)", "pruned at step", "steps trained", "ended (s)", ...s.params, "reason"];
    const table = el("table", { id: "trials-table" });
    const tr = el("tr");
    head.forEach((h) => tr.appendChild(el("th", {}, h)));
    table.appendChild(el("thead")).appendChild(tr);
    const body = table.appendChild(el("tbody"));
    for (const t of s.trials) {
      const best = s.best && s.best.name === t.name;
      const row = el("tr", { class: "state-" + t.state + (best ? " best" : ""), "data-trial": t.name });
      const ended = t.ended_s === null ? null : t.ended_s.toFixed(1);  // 4.0, not 4, in a column of tenths
      [t.name + (best ? " (best)" : ""), t.state, t.value, t.pruned_at, t.steps, ended, ...s.params.map((p) => t.params[p]), t.reason]
        .forEach((v) => row.appendChild(el("td", {}, fmt(v))));
      row.lastChild.className = "reason";  // wraps in its column (report_page.html.j2), never off the page
      body.appendChild(row);
    }
    document.getElementById("trials").replaceChildren(table);
  }

  // -- wiring ----------------------------------------------------------------------------------------
  // the answer first: the forest plot and the verdicts are drawn before anything else
  if (page.stats) {
    forest();
    statsTable();
    document.getElementById("forest-all").addEventListener("click", () => { forestAll = !forestAll; forest(); });
    document.getElementById("stats-all").addEventListener("click", () => { statsAll = !statsAll; statsTable(); });
  }
  if (page.search) {
    document.getElementById("search-x").addEventListener("change", searchCurve);
    searchCurve();
    bestTrial();
    trialsTable();
  }
  document.getElementById("diff-only").addEventListener("change", runTable);
  runTable();
  if (page.curve_metrics.length) {
    ["curve-metric", "log-x", "log-y"].forEach((id) => document.getElementById(id).addEventListener("change", curves));
    curves();
  }
  if (scored.length && page.params.length) {
    // parallel coordinates are WebGL: without a GPU (software GL) they cost about as much as every
    // other view together, so they are drawn when their section comes near the screen
    const drawParcoords = () => {
      parcoords();
      document.body.dataset.parcoords = "1";
    };
    document.getElementById("topk").addEventListener("input", drawParcoords);
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          observer.disconnect();
          if (!document.body.dataset.parcoords) drawParcoords();
        }
      },
      { rootMargin: "300px" }
    );
    observer.observe(document.getElementById("parcoords"));
  }
  if (page.importance) importance();
  if (page.scatter && scored.length) scatter();
  document.body.dataset.drawnMs = String(Math.round(performance.now()));  // for the benchmark
  document.body.dataset.ready = "1";
})();
