// attnkit explorer: the views of a Transformer's layer attention (L, H, T, S), drawn as SVG with no library.
// headView: lines from each target token to the source tokens, one colour per head, several heads overlaid,
// filtered to the hovered token; modelView: every layer x head as a small matrix, a click opens one.
// Uses el/svg/display/SVG from explorer.js (loaded after this file, called only once the page runs).

const HEAD_COLOURS = ["#d64524", "#2166ac", "#1a9850", "#984ea3", "#ff7f00", "#a65628", "#f781bf", "#4d4d4d",
  "#66c2a5", "#e78ac3", "#8da0cb", "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3", "#1f78b4"];

function headColour(h) {
  return HEAD_COLOURS[h % HEAD_COLOURS.length];
}

function headView(layer, heads, src, tgt) {
  // layer: (H, T, S) of one decoder layer; heads: the heads drawn. Lines carry data-head/row/col/weight.
  const rowHeight = 22, width = 460, top = 24, left = 150, right = width - 150;
  const height = top + rowHeight * Math.max(src.length, tgt.length) + 10;
  const root = svg("svg", { xmlns: SVG, class: "head-view", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  root.append(svg("text", { x: left - 8, y: 14, "text-anchor": "end", class: "axis-title" }, "target"));
  root.append(svg("text", { x: right + 8, y: 14, class: "axis-title" }, "source"));
  const ty = (i) => top + i * rowHeight + rowHeight / 2, sy = (j) => top + j * rowHeight + rowHeight / 2;
  const lines = svg("g", { class: "head-lines" });
  heads.forEach((h) => layer[h].forEach((row, i) => row.forEach((w, j) => {
    if (w < 0.01) return;
    lines.append(svg("line", {
      x1: left, y1: ty(i), x2: right, y2: sy(j), stroke: headColour(h), "stroke-width": 2,
      "stroke-opacity": w.toFixed(4), class: "head-line", "data-head": h, "data-row": i, "data-col": j, "data-weight": w.toFixed(5),
    }));
  })));
  root.append(lines);
  const focus = (side, index) => lines.querySelectorAll("line").forEach((line) => {
    const hit = index === null || Number(line.dataset[side === "target" ? "row" : "col"]) === index;
    line.style.display = hit ? "" : "none";
  });
  const label = (text, x, y, anchor, side, index) => {
    const node = svg("text", { x, y: y + 4, "text-anchor": anchor, class: `head-token ${side}`, "data-index": index }, display(text));
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

function modelView(layers, onPick) {
  // layers: (L, H, T, S); one small matrix per layer x head, darker = more weight; a click calls onPick(l, h)
  const cell = 3, gap = 10, label = 56;
  const rows = layers[0][0].length, cols = layers[0][0][0].length;
  const tile = { w: Math.max(cols * cell, 24), h: Math.max(rows * cell, 24) };
  const heads = layers[0].length;
  const width = label + heads * (tile.w + gap), height = 20 + layers.length * (tile.h + gap);
  const root = svg("svg", { xmlns: SVG, class: "model-view", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  for (let h = 0; h < heads; h++) root.append(svg("text", { x: label + h * (tile.w + gap), y: 12, class: "axis-title" }, `head ${h}`));
  layers.forEach((layer, l) => {
    const y0 = 20 + l * (tile.h + gap);
    root.append(svg("text", { x: 0, y: y0 + 12, class: "axis-title" }, `layer ${l}`));
    layer.forEach((map, h) => {
      const x0 = label + h * (tile.w + gap);
      const g = svg("g", { class: "thumb", "data-layer": l, "data-head": h, transform: `translate(${x0} ${y0})` });
      g.append(svg("rect", { x: 0, y: 0, width: tile.w, height: tile.h, fill: "#ffffff", stroke: "#e3e3e8" }));
      map.forEach((row, i) => row.forEach((w, j) => {
        if (w >= 0.02) g.append(svg("rect", { x: j * cell, y: i * cell, width: cell, height: cell, fill: headColour(h), "fill-opacity": w.toFixed(3) }));
      }));
      g.append(svg("title", {}, `layer ${l}, head ${h}: click to open`));
      g.addEventListener("click", () => onPick(l, h));
      root.append(g);
    });
  });
  return root;
}
