/* report.js: draws report.html's charts with uPlot from the JSON data block (id "surge-data").
   Each chart spec (surge.present.html.uplot, from the chart's one description in
   surge.present.charts, which report.md's SVGs draw too): {id, title, x, xlabel, xlog, xcats,
   xticks, ylabel, yzero, y2label, note, rules, series:[{label, values, style, axis, unit, colour}],
   zones, zoneColours, marks, band, whiskers}. A series of style "interval" is a step over each
   interval (its value from the previous x to its own); PALETTE is surge.present.charts.PALETTE.
   After drawing, each chart's container gets data-points (the non-null values uPlot was given),
   data-ymin and data-ymax (the left axis' range as drawn), data-rules (the threshold lines drawn
   inside the plot) and data-xticks (the x values ticked, when the spec names them). */
(function () {
  "use strict";
  var PALETTE = ["#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"];
  var data = JSON.parse(document.getElementById("surge-data").textContent);

  function fmt(v) {
    if (v == null || isNaN(v)) return "-";
    var a = Math.abs(v);
    if (a >= 1000) return v.toLocaleString("en-US", {maximumFractionDigits: 1});
    if (a >= 10) return v.toFixed(2);
    return v.toPrecision(3);
  }

  function zonesHook(spec) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      spec.zones.forEach(function (z) {
        var x0 = u.valToPos(z.from, "x", true), x1 = u.valToPos(z.to, "x", true);
        ctx.fillStyle = spec.zoneColours[z.zone] || "rgba(0,0,0,0.05)";  // the legend's colours (experiment_charts)
        ctx.fillRect(Math.min(x0, x1), top, Math.abs(x1 - x0), h);
      });
      ctx.restore();
    };
  }

  function marksHook(spec) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      ctx.font = (12 * devicePixelRatio) + "px sans-serif";
      spec.marks.forEach(function (m) {
        var x = u.valToPos(m.x, "x", true);
        ctx.strokeStyle = m.colour || "#333"; ctx.setLineDash([6, 4]); ctx.lineWidth = devicePixelRatio;
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + h); ctx.stroke();
        ctx.fillStyle = m.colour || "#333"; ctx.fillText(m.label, x + 4 * devicePixelRatio, top + 14 * devicePixelRatio);
      });
      ctx.restore();
    };
  }

  function rulesHook(spec, el) {
    return function (u) {
      var ctx = u.ctx, left = u.bbox.left, w = u.bbox.width, top = u.bbox.top, h = u.bbox.height, drawn = 0;
      ctx.save();
      ctx.font = (12 * devicePixelRatio) + "px sans-serif";
      spec.rules.forEach(function (r) {
        var y = u.valToPos(r.value, "y", true);
        if (!(y >= top - 0.5 && y <= top + h + 0.5)) return;
        ctx.strokeStyle = r.colour || "#d62728"; ctx.setLineDash([10, 5]); ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + w, y); ctx.stroke();
        ctx.fillStyle = r.colour || "#d62728"; ctx.fillText(r.label, left + 6 * devicePixelRatio, y - 4 * devicePixelRatio);
        drawn++;
      });
      ctx.restore();
      el.setAttribute("data-rules", String(drawn));
    };
  }

  function fromZero(spec, scale) {
    return function (u, min, max) {
      var top = max == null ? 0 : max;
      if (scale === "y" && spec.rules) spec.rules.forEach(function (r) { if (r.value > top) top = r.value; });
      if (!(top > 0)) top = 1;
      return [0, top * 1.08];
    };
  }

  function whiskersHook(spec) {
    return function (u) {
      var ctx = u.ctx;
      ctx.save(); ctx.lineWidth = 2 * devicePixelRatio;
      spec.whiskers.forEach(function (w) {
        var lo = u.data[w.low], hi = u.data[w.high];
        ctx.strokeStyle = w.colour || "#444";
        for (var i = 0; i < u.data[0].length; i++) {
          if (lo[i] == null || hi[i] == null) continue;
          var x = u.valToPos(u.data[0][i], "x", true), cap = 6 * devicePixelRatio;
          var y0 = u.valToPos(lo[i], "y", true), y1 = u.valToPos(hi[i], "y", true);
          ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y1);
          ctx.moveTo(x - cap, y0); ctx.lineTo(x + cap, y0); ctx.moveTo(x - cap, y1); ctx.lineTo(x + cap, y1);
          ctx.stroke();
        }
      });
      ctx.restore();
    };
  }

  function build(spec, el) {
    var width = Math.max(320, Math.min(1120, el.clientWidth || 1120));
    var xs = {time: false, distr: spec.xlog ? 3 : 1};
    if (spec.xlog) xs.log = spec.xlog;
    var scales = {x: xs, y: spec.ylog ? {distr: 3, log: 10} : {}};
    if (spec.yzero) scales.y.range = fromZero(spec, "y");
    var xaxis = {label: spec.xlabel || ""};
    if (spec.xticks) {
      xaxis.splits = function () { el.setAttribute("data-xticks", JSON.stringify(spec.xticks)); return spec.xticks; };
      xaxis.values = function (u, splits) { return splits.map(function (v) { return v.toLocaleString("en-US"); }); };
    }
    if (spec.xcats) {
      xaxis.values = function (u, splits) { return splits.map(function (v) { return spec.xcats[Math.round(v)] != null ? spec.xcats[Math.round(v)] : ""; }); };
      xaxis.splits = function () { return spec.xcats.map(function (_, i) { return i; }); };
      scales.x.range = [-0.6, spec.xcats.length - 0.4];
    }
    var axes = [xaxis, {label: spec.ylabel || "", size: 70, values: function (u, s) { return s.map(fmt); }}];
    var hasY2 = spec.series.some(function (s) { return s.axis === "y2"; });
    if (hasY2) {
      scales.y2 = spec.yzero ? {range: fromZero(spec, "y2")} : {};
      axes.push({scale: "y2", side: 1, grid: {show: false}, label: spec.y2label || "", size: 60,
                 values: function (u, s) { return s.map(fmt); }});
    }
    var series = [{label: spec.xlabel || "x", value: function (u, v) {
      return v == null ? "-" : (spec.xcats ? spec.xcats[Math.round(v)] : fmt(v)); }}];
    var columns = [spec.x], points = 0;
    spec.series.forEach(function (s, i) {
      var colour = s.colour || PALETTE[i % PALETTE.length];
      var opt = {label: s.label, scale: s.axis === "y2" ? "y2" : "y", stroke: colour, width: 2,
                 spanGaps: true, value: function (u, v) { return v == null ? "-" : fmt(v) + (s.unit || ""); }};
      if (s.style === "points") { opt.paths = function () { return null; }; opt.points = {show: true, size: 9, fill: colour}; }
      else if (s.style === "dash") { opt.dash = [8, 5]; opt.width = 1.5; opt.points = {show: false}; }
      else if (s.style === "bars") { opt.paths = uPlot.paths.bars({size: [0.6, 80]}); opt.fill = colour; opt.points = {show: false}; }
      else if (s.style === "step") { opt.paths = uPlot.paths.stepped({align: 1}); }
      else if (s.style === "interval") { opt.paths = uPlot.paths.stepped({align: -1}); opt.points = {show: false}; }
      series.push(opt);
      columns.push(s.values);
      s.values.forEach(function (v) { if (v != null) points++; });
    });
    var hooks = {drawClear: [], draw: []};
    if (spec.zones) hooks.drawClear.push(zonesHook(spec));
    if (spec.marks) hooks.draw.push(marksHook(spec));
    if (spec.whiskers) hooks.draw.push(whiskersHook(spec));
    if (spec.rules) hooks.draw.push(rulesHook(spec, el));
    hooks.draw.push(function (u) {
      el.setAttribute("data-points", String(points)); el.setAttribute("data-drawn", "1");
      el.setAttribute("data-ymin", String(u.scales.y.min)); el.setAttribute("data-ymax", String(u.scales.y.max));
    });
    var opts = {width: width, height: spec.height || 300, scales: scales, axes: axes, series: series, hooks: hooks,
                cursor: {drag: {x: !spec.xcats, y: false}}, legend: {live: true}};
    if (spec.band) opts.bands = [{series: spec.band, fill: "rgba(31,119,180,0.12)"}];
    el.setAttribute("data-points", String(points));
    return new uPlot(opts, columns, el);
  }

  data.charts.forEach(function (spec) {
    var el = document.getElementById("chart-" + spec.id);
    if (el) build(spec, el);
  });
})();
