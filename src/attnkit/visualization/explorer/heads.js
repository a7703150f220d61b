// attnkit explorer: the Heads view, a head report of `attnkit heads` (evaluation.heads) drawn as SVG:
// per part (encoder, decoder, cross) a layers x heads grid of the BLEU change when that head alone is
// masked (hover: loss change and confidence), the pruning curve, and the attention sinks per layer.
// Loaded before explorer.js, whose helpers (el, svg, SVG, status) it calls at run time.
"use strict";

const HEAD_PARTS = ["encoder", "decoder", "cross"];

function shade(value, limit) {
  // red for a loss of BLEU, blue for a gain, white for none
  const t = Math.min(Math.abs(value) / limit, 1);
  const [r, g, b] = value < 0 ? [214, 69, 36] : [33, 102, 172];
  const mix = (c) => Math.round(255 + (c - 255) * t);
  return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

function headGrid(rows, part, limit) {
  const layers = Math.max(...rows.map((r) => r.layer)) + 1, heads = Math.max(...rows.map((r) => r.head)) + 1;
  const cell = 34, left = 52, top = 20;
  const width = left + heads * cell + 8, height = top + layers * cell + 24;
  const root = svg("svg", { xmlns: SVG, class: "head-grid", "data-part": part, width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("text", { x: left, y: 13, class: "axis-title" }, part));
  rows.forEach((r) => {
    const x = left + r.head * cell, y = top + (layers - 1 - r.layer) * cell;  // layer 0 at the bottom
    const box = svg("rect", { x, y, width: cell - 2, height: cell - 2, fill: shade(r.delta_bleu, limit), class: "head-cell",
      "data-layer": r.layer, "data-head": r.head, "data-delta": r.delta_bleu });
    box.append(svg("title", {}, `${part} layer ${r.layer} head ${r.head}: BLEU ${r.delta_bleu >= 0 ? "+" : ""}${r.delta_bleu}, ` +
      `loss ${r.delta_loss >= 0 ? "+" : ""}${r.delta_loss}, confidence ${r.confidence}`));
    root.append(box);
    root.append(svg("text", { x: x + cell / 2 - 1, y: y + cell / 2 + 3, "text-anchor": "middle", class: "cell-value" }, r.delta_bleu.toFixed(1)));
  });
  for (let l = 0; l < layers; l++) root.append(svg("text", { x: left - 6, y: top + (layers - 1 - l) * cell + cell / 2 + 3, "text-anchor": "end", class: "axis-label" }, `layer ${l}`));
  for (let h = 0; h < heads; h++) root.append(svg("text", { x: left + h * cell + cell / 2 - 1, y: top + layers * cell + 12, "text-anchor": "middle", class: "axis-label" }, `h${h}`));
  return root;
}

function pruningCurve(points, beam) {
  const width = 380, height = 250, left = 44, bottom = 34, top = 26, right = 16;
  const maxBleu = Math.max(...points.map((p) => p.bleu), 1);
  const x = (share) => left + share * (width - left - right), y = (b) => top + (1 - b / maxBleu) * (height - top - bottom);
  const root = svg("svg", { xmlns: SVG, class: "pruning-curve", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("polyline", { points: points.map((p) => `${x(p.share)},${y(p.bleu)}`).join(" "), fill: "none", stroke: "#2166ac", "stroke-width": 2 }));
  points.forEach((p) => {
    const dot = svg("circle", { cx: x(p.share), cy: y(p.bleu), r: 3.5, fill: "#2166ac", class: "pruning-point", "data-pruned": p.pruned, "data-bleu": p.bleu });
    dot.append(svg("title", {}, `${p.pruned} heads masked: BLEU ${p.bleu}, loss ${p.loss}`));
    root.append(dot);
  });
  [0, 0.25, 0.5, 0.75, 1].forEach((f) => {  // axis values: share of heads masked, and BLEU
    root.append(svg("line", { x1: x(f), y1: height - bottom, x2: x(f), y2: height - bottom + 4, stroke: "#6b6b70" }));
    root.append(svg("text", { x: x(f), y: height - bottom + 14, "text-anchor": "middle", class: "axis-label tick" }, `${Math.round(f * 100)}%`));
  });
  [0, 0.5, 1].forEach((f) => {
    root.append(svg("line", { x1: left - 4, y1: y(f * maxBleu), x2: left, y2: y(f * maxBleu), stroke: "#6b6b70" }));
    root.append(svg("text", { x: left - 6, y: y(f * maxBleu) + 4, "text-anchor": "end", class: "axis-label tick" }, (f * maxBleu).toFixed(1)));
  });
  root.append(svg("line", { x1: left, y1: top, x2: left, y2: height - bottom, stroke: "#c9c9d0" }));
  root.append(svg("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: "#c9c9d0" }));
  root.append(svg("text", { x: left, y: height - 2, class: "axis-label" }, "share of heads masked (least important first) \u2192"));
  root.append(svg("text", { x: 4, y: 12, class: "axis-label" }, `BLEU (beam ${beam}), ${points[0].bleu} with every head`));
  return root;
}

function sinkTable(sinks) {
  const table = el("table", { class: "sinks" });
  table.append(el("tr", {}, ...["part", "layer", "on </s>", "on the first key", "on punctuation"].map((h) => el("th", {}, h))));
  HEAD_PARTS.forEach((part) => (sinks[part] || []).forEach((s) => {
    const cells = [part, String(s.layer), s.eos === null ? "\u2013" : s.eos.toFixed(3), s.first.toFixed(3), s.punct.toFixed(3)];
    table.append(el("tr", {}, ...cells.map((c) => el("td", {}, c))));
  }));
  return table;
}

function showHeads(report, name) {
  const out = document.getElementById("heads-results");
  if (!report || !Array.isArray(report.heads) || !Array.isArray(report.pruning) || !report.baseline) {
    out.replaceChildren(el("p", { class: "error-block", role: "alert" }, `${name}: JSON, but not a head report (attnkit heads --out FILE.json)`));
    return;
  }
  const limit = Math.max(0.1, ...report.heads.map((r) => Math.abs(r.delta_bleu)));
  const card = el("article", { class: "card heads-card" });
  const model = String(report.model || "model").split(/[\\/]/).filter(Boolean).pop() || "model";  // a name, not a path
  card.append(el("p", { class: "source" }, `${model}: ${report.n_sentences} pair${report.n_sentences === 1 ? "" : "s"}, beam ${report.beam}, ` +
    `BLEU ${report.baseline.bleu}, loss ${report.baseline.loss}`));
  card.append(el("p", { class: "score" }, "BLEU change when one head is masked (red: worse without it); hover a cell for the loss change and the head's confidence"));
  const grids = el("div", { class: "row head-grids" });
  HEAD_PARTS.forEach((part) => {
    const rows = report.heads.filter((r) => r.part === part);
    if (rows.length) grids.append(headGrid(rows, part, limit));
  });
  const curve = report.pruning.length ? pruningCurve(report.pruning, report.beam) : el("p", { class: "score no-curve" }, "this report has no pruning curve (its pruning list is empty)");
  card.append(grids, curve, sinkTable(report.sinks || {}));
  out.replaceChildren(card);
}

function wireHeads() {
  document.getElementById("heads-file").addEventListener("change", async (event) => {
    const chosen = event.target.files[0];
    if (!chosen) return;
    let report;
    try {
      report = JSON.parse(await chosen.text());
    } catch (e) {  // the parser's message would quote the file's first bytes (binary, for a PNG)
      const message = `${chosen.name}: not a JSON file; choose the report written by attnkit heads --out FILE.json`;
      status(message, true);
      document.getElementById("heads-results").replaceChildren(el("p", { class: "error-block", role: "alert" }, message));
      return;
    }
    showHeads(report, chosen.name);
  });
}
