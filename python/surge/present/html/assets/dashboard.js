/* dashboard.js: the live dashboard's page (surge.present.html.dashboard_page). It follows the
   server's event stream (/events): a "state" event is the whole state (the first one at once),
   an "append" event an interval: each time chart's new point (id -> [x, each series' value], in
   the chart spec's order), the run's totals, headline and thresholds so far. It shows the state as it stands: the run's headline table, verdict and report link (HTML the server wrote
   with report.html's own pieces), the experiment's runs table, and the charts, drawn by
   report.js (the report's own drawing code, kept as text in #surge-report-js) from the chart
   specs the server built with the one chart description. window.surgeDashboard holds what is
   shown: seq, done, the event, the run's totals, each chart's data points, the experiment's runs. */
(function () {
  "use strict";
  var shown = window.surgeDashboard = {seq: -1, done: false, event: null, states: 0, totals: null,
                                       points: {}, intervals: 0, experiment: null, report: null};
  var reportJs = document.getElementById("surge-report-js").textContent;
  var drawnKey = null;

  function points(spec) {
    var n = 0;
    spec.series.forEach(function (s) { s.values.forEach(function (v) { if (v != null) n++; }); });
    return n;
  }

  function holder(parent, spec) {
    var h = document.createElement("h3");
    h.textContent = spec.title;
    var div = document.createElement("div");
    div.className = "chart";
    div.id = "chart-" + spec.id;
    parent.appendChild(h);
    parent.appendChild(div);
    if (spec.note) {
      var p = document.createElement("p");
      p.className = "note";
      p.textContent = spec.note;
      parent.appendChild(p);
    }
  }

  function draw(runCharts, experimentCharts) {
    var key = JSON.stringify([runCharts, experimentCharts]);
    if (key === drawnKey) return;
    drawnKey = key;
    var charts = document.getElementById("charts"), more = document.getElementById("experiment-charts");
    charts.textContent = "";
    more.textContent = "";
    runCharts.forEach(function (spec) { holder(charts, spec); });
    experimentCharts.forEach(function (spec) { holder(more, spec); });
    shown.points = {};
    runCharts.concat(experimentCharts).forEach(function (spec) { shown.points[spec.id] = points(spec); });
    // report.js draws every spec of #surge-data into its chart-<id> container, as in report.html.
    document.getElementById("surge-data").textContent = JSON.stringify({charts: runCharts.concat(experimentCharts)});
    var script = document.createElement("script");
    script.textContent = reportJs;
    document.body.appendChild(script);
    document.body.removeChild(script);
  }

  function put(id, html) {
    var el = document.getElementById(id);
    if (el.innerHTML !== html) el.innerHTML = html;  // the server's HTML: every text escaped there
  }

  function status(state) {
    var run = state.run, text;
    if (state.done) text = "The command ended: the server has stopped; this page keeps what it showed.";
    else if (!run) text = "Waiting for the first run…";
    else if (run.ended) text = "Run " + state.runs + " (" + run.label + ") ended.";
    else text = "Running: run " + state.runs + " (" + run.label + "), interval " + run.intervals + ".";
    document.getElementById("status").textContent = text;
  }

  function show(state) {
    shown.seq = state.seq;
    shown.done = state.done;
    shown.event = state.event;
    shown.states++;
    shown.report = state.report;
    var run = state.run, experiment = state.experiment;
    shown.totals = run ? run.totals : null;
    shown.intervals = run ? run.intervals : 0;
    shown.experiment = experiment ? {kind: experiment.kind, runs: experiment.runs} : null;
    status(state);
    put("headline", run ? run.headline : "");
    put("thresholds", run && !run.ended ? run.thresholds || "" : "");
    put("verdict", experiment && experiment.verdict ? experiment.verdict : run && run.verdict ? run.verdict : "");
    put("experiment", experiment ? experiment.table : "");
    var link = document.getElementById("report");
    link.textContent = "";
    if (state.report) {
      var p = document.createElement("p"), a = document.createElement("a");
      a.id = "report-link";
      a.href = kept.file === state.report_file && kept.url ? kept.url : state.report;
      a.textContent = "report.html";
      p.appendChild(document.createTextNode("Report: "));
      p.appendChild(a);
      p.appendChild(document.createTextNode(" (" + state.report_file + ")"));
      link.appendChild(p);
      if (state.done) keep(state.report, state.report_file);
    }
    draw(run ? run.charts : [], experiment ? experiment.charts : []);
  }

  var current = null;

  function append(event) {
    var run = current && current.run;
    if (!run) return;
    run.charts.forEach(function (spec) {
      var column = event.append[spec.id];
      if (!column) return;
      spec.x.push(column[0]);
      spec.series.forEach(function (s, i) { s.values.push(column[i + 1]); });
    });
    ["intervals", "latest", "totals", "headline", "thresholds"].forEach(function (k) { run[k] = event[k]; });
    current.seq = event.seq;
  }

  // At the end the page fetches the report and links that copy (a blob URL): the server stops
  // with the command, and the link still opens the report. The server waits for the open pages
  // to fetch it (docs/dashboard.md).
  var kept = shown.kept = {file: null, url: null};
  function keep(path, file) {
    if (kept.file === file) return;
    kept.file = file;
    fetch(path).then(function (response) {
      if (!response.ok) throw new Error(response.status);
      return response.blob();
    }).then(function (blob) {
      kept.blob = new Blob([blob], {type: "text/html"});
      kept.url = URL.createObjectURL(kept.blob);
      var a = document.getElementById("report-link");
      if (a) a.href = kept.url;
    }).catch(function () { kept.file = null; });
  }

  var source = new EventSource("/events");
  source.onmessage = function (e) {
    var event = JSON.parse(e.data);
    if (event.kind === "state") current = event.state;
    else if (event.kind === "append") append(event);
    if (!current) return;
    show(current);
    if (current.done) source.close();
  };
  source.onerror = function () {
    if (shown.done) source.close();
  };
})();
