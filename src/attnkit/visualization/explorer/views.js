// attnkit explorer: the drawings of one attention map or of a Transformer's layer attention (L, H, T, S),
// as SVG with no library. matrixSvg: the (T, S) matrix with sticky labels and a per-view colour scale;
// linksSvg: lines between the two token rows; headView: lines per head, several heads overlaid (each head
// offset so none hides another); modelView: every layer x head as a small matrix, a click opens one.
// exportSvg: a drawing as a standalone file (title, fonts and colours inlined). Uses el/svg/display/SVG
// from explorer.js (loaded after this file, called only once the page runs).
"use strict";

const HEAD_COLOURS = ["#d64524", "#2166ac", "#1a9850", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#4d4d4d",
  "#66c2a5", "#e78ac3", "#8da0cb", "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3", "#1f78b4"];
const FULL_CELL = 26, SMALLEST_CELL = 9;

function headColour(h) {
  return HEAD_COLOURS[h % HEAD_COLOURS.length];
}

function room(share) {
  // the width a drawing may take: the page's main column (a compare page shows two side by side)
  const main = document.querySelector("main") || document.body;
  return Math.max(320, (main.clientWidth || 1100) - 60) * (share || 1);
}

function fitted(count, width, zoom) {
  // cell size: the full 26 px, or at "fit" as small as needed (down to 9 px) for `count` cells in `width`
  if (zoom !== "fit") return FULL_CELL;
  return Math.max(SMALLEST_CELL, Math.min(FULL_CELL, Math.floor(width / Math.max(count, 1))));
}

function short(token, most) {
  // labels of at most `most` characters (the whole token stays in the cell titles and the token strips)
  const text = display(token), n = most || 14;
  return text.length > n ? `${text.slice(0, n - 1)}\u2026` : text;
}

function matrixLegend(root, x, y, peak) {
  // colour scale of this view: fill opacity is weight / the view's largest weight, so a map that peaks at
  // 0.035 (rollout of a long sentence) reads as well as attention peaking at 1; the legend says so
  [0, 0.25, 0.5, 0.75, 1].forEach((f, k) => {
    root.append(svg("rect", { x: x + k * 30, y, width: 29, height: 10, fill: "#d64524", "fill-opacity": Math.max(f, 0.02), class: "legend" }));
    root.append(svg("text", { x: x + k * 30 + 14, y: y + 22, "text-anchor": "middle", class: "axis-title legend-value" }, (f * peak).toFixed(peak < 0.1 ? 3 : 2)));
  });
  root.append(svg("text", { x: x - 6, y: y + 9, "text-anchor": "end", class: "axis-title" }, "weight"));
  root.append(svg("text", { x: x - 40, y: y + 40, class: "axis-title scale-note" }, peak < 0.999 ? `scaled to this view's largest weight, ${peak.toFixed(3)}` : "scale 0 to 1"));
}

function matrixSvg(matrix, src, tgt, options) {
  // options: onHover(i | null), zoom ("fit" | "full"), labels {rows, cols}, share (of the page's width)
  const o = options || {}, labels = o.labels || { rows: "target", cols: "source" };
  const left = 110, top = 90, right = 100, legend = 50;
  const cell = fitted(src.length, room(o.share) - left - right, o.zoom || "fit");
  const font = cell >= 20 ? 12 : Math.max(8, cell - 2);
  // at least as wide as the legend and its note
  const width = Math.max(left + cell * src.length + right, 330), height = top + cell * tgt.length + 10 + legend;
  const root = svg("svg", { xmlns: SVG, class: "matrix", width, height, viewBox: `0 0 ${width} ${height}`, "data-cell": cell });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  const peak = Math.max(...matrix.flat(), 1e-9);
  const cells = svg("g", { class: "cells" });
  tgt.forEach((token, i) => {
    matrix[i].forEach((w, j) => {
      const rect = svg("rect", {
        class: "cell", x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1,
        fill: "#d64524", "fill-opacity": Math.max(w / peak, 0.02).toFixed(4), "data-row": i, "data-col": j,
        "data-weight": w.toFixed(5),
      });
      rect.append(svg("title", {}, `${display(token)} \u2192 ${display(src[j])}: ${w.toFixed(3)}`));
      if (o.onHover) {  // a cell highlights its row's token and shades the columns' tokens by the row
        rect.addEventListener("mouseenter", () => o.onHover(i));
        rect.addEventListener("mouseleave", () => o.onHover(null));
      }
      cells.append(rect);
    });
    cells.append(svg("text", { x: left + cell * src.length + 8, y: top + i * cell + cell / 2 + font / 3, class: "entropy", "data-row": i, style: `font-size: ${font}px` }, entropy(matrix[i]).toFixed(2)));
  });
  root.append(cells);
  matrixLegend(root, left, top + cell * tgt.length + 18, peak);
  // labels in their own groups over a white band, moved with the scroll box so they stay in view
  const rows = svg("g", { class: "row-labels" }, undefined);
  rows.append(svg("rect", { x: 0, y: top, width: left - 2, height: cell * tgt.length, fill: "#ffffff" }));
  tgt.forEach((token, i) => rows.append(svg("text", { x: left - 6, y: top + i * cell + cell / 2 + font / 3, class: "row-label", "text-anchor": "end", style: `font-size: ${font}px` }, short(token))));
  const cols = svg("g", { class: "col-labels" });
  cols.append(svg("rect", { x: 0, y: 0, width, height: top - 2, fill: "#ffffff" }));
  cols.append(svg("text", { x: 4, y: 14, class: "axis-title" }, `${labels.cols} \u2192 (columns)`));
  cols.append(svg("text", { x: 4, y: 28, class: "axis-title" }, `${labels.rows} \u2193 (rows)`));
  src.forEach((token, j) => {
    const x = left + j * cell + cell / 2;
    cols.append(svg("text", { x, y: top - 6, class: "col-label", transform: `rotate(-55 ${x} ${top - 6})`, style: `font-size: ${font}px` }, short(token)));
  });
  cols.append(svg("text", { x: left + cell * src.length + 8, y: top - 6, class: "col-label" }, "entropy (nats)"));
  root.append(rows, cols);
  return root;
}

function scrollBox(drawing) {
  // a drawing taller or wider than the page scrolls in its box; a matrix keeps its labels in view
  const box = el("div", { class: "scroll-box" }, drawing);
  const rows = drawing.querySelector("g.row-labels"), cols = drawing.querySelector("g.col-labels");
  if (rows && cols) box.addEventListener("scroll", () => {
    rows.setAttribute("transform", `translate(${box.scrollLeft} 0)`);
    cols.setAttribute("transform", `translate(0 ${box.scrollTop})`);
  });
  return box;
}

function tokenRow(root, tokens, x, y, step, side, rotate) {
  // one row of token labels for a links drawing; upright when they fit, slanted when the row is dense
  tokens.forEach((t, i) => {
    const attrs = { x: x(i), y, class: `link-token ${side}`, "data-index": i, "text-anchor": rotate ? (side === "top" ? "start" : "end") : "middle" };
    if (rotate) attrs.transform = `rotate(-50 ${x(i)} ${y})`;
    root.append(svg("text", attrs, rotate ? short(t, 16) : display(t)));
  });
}

function linksSvg(matrix, src, tgt, options) {
  // lines from each row token (below) to each column token (above), opacity = weight; a token's hover
  // keeps only its own lines. Dense rows (long sentences) get narrower steps and slanted labels.
  const o = options || {}, labels = o.labels || { rows: "target", cols: "source" };
  const n = Math.max(src.length, tgt.length);
  const step = Math.max(14, Math.min(70, Math.floor((room(o.share) - 120) / n)));
  const rotate = step < 50, pad = rotate ? 80 : 30;
  const width = n * step + 130, height = 120 + 2 * pad;
  const root = svg("svg", { xmlns: SVG, class: "links", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  const x = (k) => 100 + k * step + step / 2, yTop = pad + 8, yBottom = height - pad - 8;
  root.append(svg("text", { x: 4, y: yTop, class: "axis-title" }, labels.cols));
  root.append(svg("text", { x: 4, y: yBottom, class: "axis-title" }, labels.rows));
  root.append(svg("text", { x: 4, y: height / 2 + 4, class: "axis-title links-legend" }, "line: weight \u2265 0.02"));
  const lines = svg("g", { class: "link-lines" });
  matrix.forEach((row, i) => row.forEach((w, j) => {
    if (w >= 0.02) lines.append(svg("line", { x1: x(i), y1: yBottom - 12, x2: x(j), y2: yTop + 6, class: "link", "stroke-opacity": w.toFixed(4), "data-row": i, "data-col": j }, undefined));
  }));
  root.append(lines);
  tokenRow(root, src, x, yTop, step, "top", rotate);
  tokenRow(root, tgt, x, yBottom + 6, step, "bottom", rotate);
  root.querySelectorAll("text.link-token").forEach((node) => {
    const key = node.classList.contains("top") ? "col" : "row", index = Number(node.dataset.index);
    node.addEventListener("mouseenter", () => lines.querySelectorAll("line").forEach((line) => {
      line.classList.toggle("dim", Number(line.dataset[key]) !== index);
    }));
    node.addEventListener("mouseleave", () => lines.querySelectorAll("line").forEach((line) => line.classList.remove("dim")));
  });
  return root;
}

function headView(maps, heads, src, tgt, labels) {
  // maps[h]: (T, S) of one layer's head h; heads: the heads drawn, each in its colour, its lines offset
  // a little from the others' so heads between the same two tokens all show. Hovering a token keeps its
  // lines only. Lines carry data-head/row/col/weight.
  const rowHeight = 22, width = 520, top = 44, left = 170, right = width - 170;
  const names = labels || { rows: "target", cols: "source" };
  const height = top + rowHeight * Math.max(src.length, tgt.length) + 10;
  const root = svg("svg", { xmlns: SVG, class: "head-view", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  root.append(svg("text", { x: left - 8, y: 36, "text-anchor": "end", class: "axis-title" }, names.rows));
  root.append(svg("text", { x: right + 8, y: 36, class: "axis-title" }, names.cols));
  heads.forEach((h, k) => {  // the colour key
    root.append(svg("rect", { x: 4 + k * 56, y: 4, width: 12, height: 12, fill: headColour(h), class: "head-key", "data-head": h }));
    root.append(svg("text", { x: 20 + k * 56, y: 14, class: "axis-title" }, `head ${h}`));
  });
  const spread = Math.min(3, (rowHeight - 6) / Math.max(heads.length, 1));
  const ty = (i) => top + i * rowHeight + rowHeight / 2, sy = (j) => top + j * rowHeight + rowHeight / 2;
  const lines = svg("g", { class: "head-lines" });
  heads.forEach((h, k) => {
    const shift = (k - (heads.length - 1) / 2) * spread;
    maps[h].forEach((row, i) => row.forEach((w, j) => {
      if (w < 0.01) return;
      lines.append(svg("line", {
        x1: left, y1: ty(i) + shift, x2: right, y2: sy(j) + shift, stroke: headColour(h), "stroke-width": 2,
        "stroke-opacity": w.toFixed(4), class: "head-line", "data-head": h, "data-row": i, "data-col": j, "data-weight": w.toFixed(5),
      }));
    }));
  });
  root.append(lines);
  const focus = (side, index) => lines.querySelectorAll("line").forEach((line) => {
    const hit = index === null || Number(line.dataset[side === "target" ? "row" : "col"]) === index;
    line.style.display = hit ? "" : "none";
  });
  const label = (text, x, y, anchor, side, index) => {
    const node = svg("text", { x, y: y + 4, "text-anchor": anchor, class: `head-token ${side}`, "data-index": index }, short(text, 22));
    node.addEventListener("mouseenter", () => focus(side, index));
    node.addEventListener("mouseleave", () => focus(side, null));
    return node;
  };
  tgt.forEach((t, i) => root.append(label(t, left - 8, ty(i), "end", "target", i)));
  src.forEach((t, j) => root.append(label(t, right + 8, sy(j), "start", "source", j)));
  return root;
}

function headPicker(count, chosen, onChange) {
  // one coloured checkbox per head
  const box = el("span", { class: "head-picker" });
  for (let h = 0; h < count; h++) {
    const input = el("input", { type: "checkbox", "data-head": h });
    input.checked = chosen.has(h);
    input.addEventListener("change", () => { if (input.checked) chosen.add(h); else chosen.delete(h); onChange(); });
    box.append(el("label", { style: `color: ${headColour(h)}` }, input, ` ${h}`));
  }
  return box;
}

function thumb(map, l, h, cell, tile, caption, onPick) {
  // one layer x head tile: its matrix, its numbers on hover, a click opens it
  const g = svg("g", { class: "thumb", "data-layer": l, "data-head": h });
  g.append(svg("rect", { x: 0, y: 0, width: tile.w, height: tile.h, fill: "#ffffff", stroke: "#c9c9d0", class: "thumb-frame" }));
  const peak = Math.max(...map.flat(), 1e-9);
  map.forEach((row, i) => row.forEach((w, j) => {
    if (w >= 0.02 * peak) g.append(svg("rect", { x: j * cell, y: i * cell, width: cell, height: cell, fill: headColour(h), "fill-opacity": (w / peak).toFixed(3) }));
  }));
  const mean = map.reduce((a, row) => a + entropy(row), 0) / map.length;
  const words = `layer ${l}, head ${h}: mean entropy ${mean.toFixed(2)} nats, largest weight ${peak.toFixed(2)}; click to open it as a matrix`;
  g.append(svg("title", {}, words));
  g.addEventListener("mouseenter", () => { caption.textContent = words; g.classList.add("hot"); });
  g.addEventListener("mouseleave", () => { caption.textContent = caption.dataset.idle; g.classList.remove("hot"); });
  g.addEventListener("click", () => onPick(l, h));
  return g;
}

function modelView(layers, onPick, labels, share) {
  // layers: (L, H, T, S); one tile per layer x head, each scaled to its own largest weight, sized to fit
  // the page's width (3 to 14 px a cell); hover names it and its numbers, a click opens it
  const names = labels || { rows: "target", cols: "source" };
  const heads = layers[0].length, rows = layers[0][0].length, cols = layers[0][0][0].length;
  const gap = 10, label = 60, top = 36;
  const cell = Math.max(3, Math.min(14, Math.floor(((room(share) - label) / heads - gap) / cols)));
  const tile = { w: Math.max(cols * cell, 24), h: Math.max(rows * cell, 24) };
  const width = Math.max(label + heads * (tile.w + gap) + 4, 760), height = top + layers.length * (tile.h + gap);
  const root = svg("svg", { xmlns: SVG, class: "model-view", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  const idle = `each tile: one head's ${names.rows} (rows) x ${names.cols} (columns), scaled to its own largest weight; hover for numbers, click to open`;
  const caption = svg("text", { x: 0, y: 12, class: "axis-title model-caption", "data-idle": idle }, idle);
  root.append(caption);
  for (let h = 0; h < heads; h++) root.append(svg("text", { x: label + h * (tile.w + gap), y: top - 6, class: "axis-title" }, `head ${h}`));
  layers.forEach((layer, l) => {
    const y0 = top + l * (tile.h + gap);
    root.append(svg("text", { x: 0, y: y0 + 12, class: "axis-title" }, `layer ${l}`));
    layer.forEach((map, h) => {
      const g = thumb(map, l, h, cell, tile, caption, onPick);
      g.setAttribute("transform", `translate(${label + h * (tile.w + gap)} ${y0})`);
      root.append(g);
    });
  });
  return root;
}

const EXPORT_STYLE = "text{font:12px system-ui,-apple-system,'Segoe UI',sans-serif;fill:#1d1d1f}" +
  ".axis-title,.entropy{fill:#6b6b70;font-size:11px}.export-title{font-size:13px;font-weight:600;fill:#1d1d1f}" +
  "line.link{stroke:#d64524;stroke-width:2}";

function exportSvg(drawing, title) {
  // a drawing as a standalone SVG file: its title on top, the page's fonts and colours inlined, labels
  // back in place (a scrolled matrix moved them)
  const copy = drawing.cloneNode(true);
  copy.querySelectorAll("g.row-labels, g.col-labels").forEach((g) => g.removeAttribute("transform"));
  const width = Number(drawing.getAttribute("width")), height = Number(drawing.getAttribute("height")) + 26;
  const root = svg("svg", { xmlns: SVG, width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("style", {}, EXPORT_STYLE), svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  root.append(svg("text", { x: 4, y: 17, class: "export-title" }, title));
  const body = svg("g", { transform: "translate(0 26)" });
  body.append(...copy.childNodes);
  root.append(body);
  return new XMLSerializer().serializeToString(root);
}
