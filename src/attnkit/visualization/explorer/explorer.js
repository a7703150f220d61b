// attnkit explorer: translate, classify and align views over the JSON API (or over embedded results).
// User text only ever reaches the page as text nodes (el/svg below never parse HTML).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SPECIALS = new Set(["</s>", "<s>", "<pad>", "[CLS]", "[SEP]", "[PAD]", "<|endoftext|>"]);
const state = { models: null, limits: { max_sentences: 30, max_words: 60 } };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function status(message, isError) {
  const node = document.getElementById("status");
  node.textContent = message;
  node.className = isError ? "error" : "";
}

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// ---- attention arithmetic (the same rules as attnkit.data.words and attnkit.attention) -------------

function family(pieces) {
  // the tokenizer family's marker (as attnkit.data.words): sentencepiece "\u2581" and byte-level BPE
  // "\u0120" start words, WordPiece "##" continues them
  const content = pieces.filter((p) => !SPECIALS.has(p));
  if (content.some((p) => p.startsWith("\u2581"))) return "\u2581";
  if (content.some((p) => p.startsWith("\u0120"))) return "\u0120";
  return "##";
}

function wordGroups(pieces) {
  const groups = [], marker = family(pieces);
  pieces.forEach((p, i) => {
    const starts = marker === "##" ? !p.startsWith("##") : p.startsWith(marker);
    if (!groups.length || starts || SPECIALS.has(p) || SPECIALS.has(pieces[i - 1])) groups.push([i]);
    else groups[groups.length - 1].push(i);
  });
  return groups;
}

function groupLabel(pieces, group) {
  const word = group.map((i) => pieces[i].replace(/^##/, "")).join("").replace(/^[\u2581\u0120]/, "");
  return word || pieces[group[0]];
}

function toWords(matrix, src, tgt) {
  // source word = sum of its pieces' columns; target word = mean of its pieces' rows
  const sg = wordGroups(src), tg = wordGroups(tgt);
  const cols = matrix.map((row) => sg.map((g) => g.reduce((a, j) => a + row[j], 0)));
  const rows = tg.map((g) => cols[0].map((_, j) => g.reduce((a, i) => a + cols[i][j], 0) / g.length));
  return { matrix: rows, src: sg.map((g) => groupLabel(src, g)), tgt: tg.map((g) => groupLabel(tgt, g)) };
}

function meanHeads(layer) {
  return layer[0].map((row, t) => row.map((_, s) => layer.reduce((a, h) => a + h[t][s], 0) / layer.length));
}

function entropy(row) {
  return -row.reduce((a, w) => (w > 0 ? a + w * Math.log(w) : a), 0);
}

function display(token) {
  return token === "\u2581" || token === "\u0120" ? "_" : token.replace(/[\u2581\u0120]/g, "");
}

// ---- translate view --------------------------------------------------------------------------------

function layerSet(result, which) {
  // the per-layer maps a view reads, with its row and column tokens: cross-attention (target x source),
  // or the encoder's (source x source) or decoder's (target x target) self-attention
  if (which === "encoder") return { maps: result.encoder_attention, rows: result.source_tokens, cols: result.source_tokens };
  if (which === "decoder") return { maps: result.decoder_attention, rows: result.target_tokens, cols: result.target_tokens };
  return { maps: result.layer_attention, rows: result.target_tokens, cols: result.source_tokens };
}

function currentView(result, view) {
  let matrix = result.attention, src = result.source_tokens, tgt = result.target_tokens;
  if (view.rank > 0 && result.alternative_attention) {  // an n-best alternative (decoding attention only)
    matrix = result.alternative_attention[view.rank - 1];
    tgt = result.alternative_tokens[view.rank - 1];
    if (view.words) ({ matrix, src, tgt } = toWords(matrix, src, tgt));
    return { matrix, src, tgt };
  }
  const which = view.which || "cross";
  const set = layerSet(result, which);
  if (set.maps && (which !== "cross" || view.layer !== "model")) {
    ({ rows: tgt, cols: src } = set);
    if (view.layer === "all") matrix = meanHeads(set.maps.map((layer) => meanHeads(layer)));  // the summary
    else {
      const layer = set.maps[view.layer === "model" ? set.maps.length - 1 : Number(view.layer)];
      matrix = view.head === "mean" || view.layer === "model" ? meanHeads(layer) : layer[Number(view.head)];
    }
  }
  if (view.words) ({ matrix, src, tgt } = toWords(matrix, src, tgt));
  return { matrix, src, tgt };
}

function highlight(card, side, index, weights) {
  // hovering a token of `side` shades the other side's tokens by `weights`
  const other = side === "target" ? "source" : "target";
  card.querySelectorAll(`.tok.${other}`).forEach((node, j) => {
    const w = index === null ? 0 : weights[j];
    node.style.backgroundColor = index === null ? "" : `rgba(214, 69, 36, ${w.toFixed(4)})`;
    node.style.color = index !== null && w > 0.55 ? "#ffffff" : "";
    node.dataset.highlight = index === null ? "" : w.toFixed(5);
  });
  card.querySelectorAll(`.tok.${side}`).forEach((node, j) => node.classList.toggle("active", j === index));
  card.querySelectorAll("rect.cell").forEach((cell) => {
    const hit = index !== null && Number(cell.dataset[side === "target" ? "row" : "col"]) === index;
    cell.classList.toggle("hot", hit);
  });
}

function pieceStarts(pieces) {
  // whether each piece begins a word (a continuation piece is drawn with a dotted left edge)
  const starts = new Array(pieces.length).fill(false);
  wordGroups(pieces).forEach((g) => { starts[g[0]] = true; });
  return starts;
}

function tokenStrip(card, tokens, side, matrix) {
  const strip = el("div", { class: `strip ${side}` }, el("span", { class: "side" }, side));
  const starts = pieceStarts(tokens);
  tokens.forEach((token, i) => {
    const kind = starts[i] ? "" : " cont";
    const node = el("span", { class: `tok ${side}${kind}`, "data-index": i, tabindex: 0, title: token }, display(token));
    const weights = () => (side === "target" ? matrix[i] : matrix.map((row) => row[i]));
    node.addEventListener("mouseenter", () => highlight(card, side, i, weights()));
    node.addEventListener("focus", () => highlight(card, side, i, weights()));
    node.addEventListener("mouseleave", () => highlight(card, side, null, []));
    strip.append(node);
  });
  return strip;
}

function short(token) {
  // labels of at most 14 characters (the whole token stays in the cell titles and the token strips)
  const text = display(token);
  return text.length > 14 ? `${text.slice(0, 13)}\u2026` : text;
}

function matrixSvg(matrix, src, tgt, onHover) {
  const cell = 26, left = 110, top = 90, right = 70, legend = 34;
  const width = left + cell * src.length + right, height = top + cell * tgt.length + 10 + legend;
  const root = svg("svg", { xmlns: SVG, class: "matrix", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  root.append(svg("text", { x: 4, y: 14, class: "axis-title" }, "source \u2192 (columns)"));
  root.append(svg("text", { x: 4, y: 28, class: "axis-title" }, "target \u2193 (rows)"));
  // colour scale of this view: the fill opacity is the weight over the view's largest one, so a map that
  // peaks at 0.035 (rollout of a long sentence) is as readable as attention peaking at 1; the legend says so
  const peak = Math.max(...matrix.flat(), 1e-9);
  const ly = top + cell * tgt.length + 18;
  [0, 0.25, 0.5, 0.75, 1].forEach((f, k) => {
    root.append(svg("rect", { x: left + k * 24, y: ly, width: 23, height: 10, fill: "#d64524", "fill-opacity": Math.max(f, 0.02), class: "legend" }));
    root.append(svg("text", { x: left + k * 24 + 11, y: ly + 22, "text-anchor": "middle", class: "axis-title legend-value" }, (f * peak).toFixed(peak < 0.1 ? 3 : 2)));
  });
  root.append(svg("text", { x: left - 6, y: ly + 9, "text-anchor": "end", class: "axis-title" }, "weight"));
  root.append(svg("text", { x: left + 5 * 24 + 8, y: ly + 9, class: "axis-title scale-note" }, peak < 0.999 ? `scaled to this view's largest weight, ${peak.toFixed(3)}` : "scale 0 to 1"));
  src.forEach((token, j) => {
    const x = left + j * cell + cell / 2;
    root.append(svg("text", { x, y: top - 6, class: "col-label", transform: `rotate(-55 ${x} ${top - 6})` }, short(token)));
  });
  root.append(svg("text", { x: left + cell * src.length + 8, y: top - 6, class: "col-label" }, "entropy (nats)"));
  tgt.forEach((token, i) => {
    const y = top + i * cell + cell / 2 + 4;
    root.append(svg("text", { x: left - 6, y, class: "row-label", "text-anchor": "end" }, short(token)));
    matrix[i].forEach((w, j) => {
      const rect = svg("rect", {
        class: "cell", x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1,
        fill: "#d64524", "fill-opacity": Math.max(w / peak, 0.02).toFixed(4), "data-row": i, "data-col": j,
        "data-weight": w.toFixed(5),
      });
      rect.append(svg("title", {}, `${display(token)} \u2192 ${display(src[j])}: ${w.toFixed(3)}`));
      if (onHover) {  // a cell highlights its target token and shades the sources by the row's weights
        rect.addEventListener("mouseenter", () => onHover(i));
        rect.addEventListener("mouseleave", () => onHover(null));
      }
      root.append(rect);
    });
    root.append(svg("text", { x: left + cell * src.length + 8, y, class: "entropy", "data-row": i }, entropy(matrix[i]).toFixed(2)));
  });
  return root;
}

function linksSvg(matrix, src, tgt) {
  const step = 70, width = Math.max(src.length, tgt.length) * step + 40, height = 150;
  const root = svg("svg", { xmlns: SVG, class: "links", width, height, viewBox: `0 0 ${width} ${height}` });
  const sx = (j) => 20 + j * step + step / 2, tx = (i) => 20 + i * step + step / 2;
  matrix.forEach((row, i) => row.forEach((w, j) => {
    if (w >= 0.02) root.append(svg("line", { x1: tx(i), y1: 118, x2: sx(j), y2: 30, class: "link", "stroke-opacity": w.toFixed(4), "data-row": i, "data-col": j }));
  }));
  src.forEach((t, j) => root.append(svg("text", { x: sx(j), y: 20, "text-anchor": "middle" }, display(t))));
  tgt.forEach((t, i) => root.append(svg("text", { x: tx(i), y: 138, "text-anchor": "middle" }, display(t))));
  return root;
}

function download(name, type, content) {
  const link = el("a", { href: URL.createObjectURL(new Blob([content], { type })), download: name });
  document.body.append(link);
  link.click();
  link.remove();
}

function exportPng(svgNode, name) {
  const image = new Image();
  const data = new XMLSerializer().serializeToString(svgNode);
  image.onload = () => {
    const canvas = el("canvas", { width: svgNode.getAttribute("width") * 2, height: svgNode.getAttribute("height") * 2 });
    const context = canvas.getContext("2d");
    context.scale(2, 2);
    context.drawImage(image, 0, 0);
    canvas.toBlob((blob) => download(name, "image/png", blob));
  };
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(data);
}

function select(id, options, value) {
  const node = el("select", { id });
  options.forEach(([v, label]) => node.append(el("option", { value: v }, label)));
  node.value = value;
  return node;
}

function translationCard(result, index, loadLayers) {
  const card = el("article", { class: "card translation-card", "data-index": index });
  card.append(el("p", { class: "source" }, result.source));
  const shownText = el("p", { class: "translation" }, result.translation);
  card.append(shownText);
  card.append(el("p", { class: "score" }, `log-probability ${result.score} (length-normalized)`));
  if (result.attention_map) {
    card.append(el("p", { class: "score map-kind" }, `map: ${result.attention_map} (derived from the attention, rows normalized; the layer views stay raw)`));
  }
  let nbest = null;
  if (result.alternatives && result.alternatives.length) {
    // each hypothesis is a button: its attention replaces the matrix (the best one is item 1)
    // reranked lists are ordered by the combined score, which each item shows beside the model's own
    const ranked = result.rerank ? result.rerank.candidates : null;
    nbest = el("ol", { class: "nbest" });
    [result.translation, ...result.alternatives].forEach((text, k) => {
      const score = k ? result.alternative_scores[k - 1] : result.score;
      const c = ranked && ranked[k];
      const detail = c ? ` combined ${c.combined} (model ${c.forward}, channel ${c.channel})` : ` log-probability ${score}`;
      const item = el("li", {}, el("button", { type: "button", class: "hypothesis", "data-rank": k, title: "show this hypothesis's attention" }, text), el("span", { class: "score" }, detail));
      nbest.append(item);
    });
    const why = ranked ? `, reranked by a channel model (weight ${result.rerank.channel_weight})` : "";
    card.append(el("details", {}, el("summary", {}, `n-best (${result.alternatives.length + 1})${why}: click one to see its attention`), nbest));
  }
  (result.warnings || []).forEach((w) => card.append(el("p", { class: "warning" }, w)));
  if (!result.translation) return card;
  const view = { words: false, layer: "model", head: "mean", rank: 0 };
  const bar = el("div", { class: "row view-controls" });
  const words = el("input", { type: "checkbox", class: "words-toggle" });
  bar.append(el("label", {}, words, " words (subwords merged)"));
  let layerSelect = null, headSelect = null, viewSelect = null, whichSelect = null, picked = null, picker = null;
  // a Transformer's per-layer maps: embedded in the result, or fetched for this card when first chosen
  const shape = result.layer_attention ? [result.layer_attention.length, result.layer_attention[0].length] : loadLayers && loadLayers.shape;
  if (shape && shape[0] > 0) {
    const [layers, heads] = shape;
    const layerOptions = [["model", "decoding attention"], ["all", "all layers and heads (mean)"], ...[...Array(layers).keys()].map((l) => [l, `layer ${l}`])];
    layerSelect = select(`layer-${index}`, layerOptions, "model");
    headSelect = select(`head-${index}`, [["mean", "head mean"], ...[...Array(heads).keys()].map((h) => [h, `head ${h}`])], "mean");
    layerSelect.classList.add("layer-select");
    headSelect.classList.add("head-select");
    bar.append(el("label", {}, "layer ", layerSelect), el("label", {}, "head ", headSelect));
    if (loadLayers && loadLayers.selfAttention) {
      whichSelect = select(`which-${index}`, [["cross", "cross-attention"], ["encoder", "encoder self-attention"], ["decoder", "decoder self-attention"]], "cross");
      whichSelect.classList.add("which-select");
      bar.append(el("label", {}, "kind ", whichSelect));
    }
    viewSelect = select(`view-${index}`, [["matrix", "matrix"], ["head", "head view"], ["model", "model view"]], "matrix");
    viewSelect.classList.add("view-select");
    bar.append(el("label", {}, "view ", viewSelect));
    picked = new Set([...Array(heads).keys()]);
    picker = headPicker(heads, picked, () => draw());
  }
  const exports = el("span", { class: "exports" });
  ["SVG", "PNG", "JSON"].forEach((kind) => exports.append(el("button", { type: "button", "data-export": kind.toLowerCase() }, kind)));
  bar.append(exports);
  card.append(bar);
  const body = el("div", { class: "attention" });
  card.append(body);
  const draw = () => {
    view.words = words.checked;
    if (layerSelect) { view.layer = layerSelect.value; view.head = headSelect.value; headSelect.disabled = ["model", "all"].includes(view.layer); }
    view.which = whichSelect ? whichSelect.value : "cross";
    const { matrix, src, tgt } = currentView(result, view);
    const set = layerSet(result, view.which);
    const kind = viewSelect && set.maps ? viewSelect.value : "matrix";
    const strips = [tokenStrip(card, src, "source", matrix), tokenStrip(card, tgt, "target", matrix)];
    if (kind === "head") {  // subword pieces, one layer (the decoding attention's when none is chosen)
      const l = ["model", "all"].includes(view.layer) ? set.maps.length - 1 : Number(view.layer);
      body.replaceChildren(picker, headView(set.maps[l], [...picked].sort((a, b) => a - b), set.cols, set.rows));
    } else if (kind === "model") {
      body.replaceChildren(modelView(set.maps, (l, h) => {
        layerSelect.value = String(l); headSelect.value = String(h); viewSelect.value = "matrix"; change();
      }));
    } else {
      const hover = (i) => highlight(card, "target", i, i === null ? [] : matrix[i]);
      body.replaceChildren(...strips, matrixSvg(matrix, src, tgt, hover), linksSvg(matrix, src, tgt));
    }
    card.currentView = { source_tokens: src, target_tokens: tgt, attention: matrix, view: { ...view, kind } };
  };
  const change = async () => {
    view.rank = 0;  // layer views are the best hypothesis's
    if (nbest) nbest.querySelectorAll("button.hypothesis").forEach((b) => b.classList.remove("shown"));
    shownText.textContent = result.translation;
    if (whichSelect && whichSelect.value !== "cross" && !result.encoder_attention) {
      try {
        Object.assign(result, await loadLayers.selfMaps(result));
      } catch (e) {
        whichSelect.value = "cross";
        status(e.message, true);
      }
    }
    const wantsLayers = layerSelect && (layerSelect.value !== "model" || viewSelect.value !== "matrix");
    if (wantsLayers && !result.layer_attention) {
      layerSelect.disabled = true;
      try {
        result.layer_attention = await loadLayers.fetch(result);
      } catch (e) {
        layerSelect.value = "model";
        viewSelect.value = "matrix";
        status(e.message, true);
      } finally {
        layerSelect.disabled = false;
      }
    }
    draw();
    const which = whichSelect && whichSelect.value !== "cross" ? `/${whichSelect.value}` : "";
    card.dataset.drawn = layerSelect ? `${layerSelect.value}/${viewSelect.value}${which}` : "model";
  };
  [words, layerSelect, headSelect, viewSelect, whichSelect].forEach((node) => node && node.addEventListener("change", change));
  if (nbest) nbest.addEventListener("click", async (event) => {
    const button = event.target.closest("button.hypothesis");
    if (!button) return;
    if (Number(button.dataset.rank) > 0 && !result.alternative_attention) {
      if (!loadLayers) return;  // a static page without the alternatives' maps
      try {
        Object.assign(result, await loadLayers.alternatives(result));
      } catch (e) {
        status(e.message, true);
        return;
      }
    }
    view.rank = Number(button.dataset.rank);
    nbest.querySelectorAll("button.hypothesis").forEach((b) => b.classList.toggle("shown", b === button));
    shownText.textContent = view.rank ? `#${view.rank + 1}: ${button.textContent}` : result.translation;
    if (layerSelect) { layerSelect.value = "model"; viewSelect.value = "matrix"; }  // layers are the best's
    draw();
    card.dataset.drawn = `rank ${view.rank}`;
  });
  exports.addEventListener("click", (event) => {
    const kind = event.target.dataset && event.target.dataset.export;
    const stem = `attention-${index + 1}`;
    const shown = body.querySelector("svg.matrix, svg.head-view, svg.model-view");  // the view on screen
    if (kind === "svg") download(`${stem}.svg`, "image/svg+xml", new XMLSerializer().serializeToString(shown));
    if (kind === "png") exportPng(shown, `${stem}.png`);
    if (kind === "json") download(`${stem}.json`, "application/json", JSON.stringify(card.currentView, null, 1));
  });
  draw();
  return card;
}

function showTranslations(results, loadLayers) {
  const box = document.getElementById("translate-results");
  box.replaceChildren(...results.map((r, i) => translationCard(r, i, loadLayers)));
}

function layerLoader(request, model) {
  // Layer attention (L, H, T, S) and the n-best's own maps are asked for one card at a time, when first
  // shown, by translating that sentence again with the same settings and layers (alternatives) on.
  const again = async (result, extra) => {
    const answer = (await api("/api/translate", { ...request, sentences: [result.source], ...extra })).results[0];
    if (answer.translation !== result.translation) throw new Error("the model answered differently; translate again");
    return answer;
  };
  return {
    shape: model && model.layers > 0 ? [model.layers, model.heads] : null,
    selfAttention: Boolean(model && model.self_attention),
    selfMaps: async (result) => {
      const answer = await again(result, { self_attention: true });
      return { encoder_attention: answer.encoder_attention, decoder_attention: answer.decoder_attention };
    },
    fetch: async (result) => (await again(result, { layers: true })).layer_attention,
    alternatives: async (result) => {
      const answer = await again(result, { alternative_attention: true });
      return { alternative_tokens: answer.alternative_tokens, alternative_attention: answer.alternative_attention };
    },
  };
}

// ---- classify view ---------------------------------------------------------------------------------

function reprior(probs, weights, tauFrom, tauTo) {
  const scaled = probs.map((p, c) => p * Math.pow(weights[c], tauFrom - tauTo));
  const total = scaled.reduce((a, b) => a + b, 0);
  return scaled.map((p) => p / total);
}

function classificationCard(result, prior, index) {
  const card = el("article", { class: "card classification-card", "data-index": index });
  const labels = prior.labels, base = labels.map((c) => result.probabilities[c]);
  const decision = el("p", { class: "decision" });
  const bars = el("div", { class: "bars" });
  const slider = el("input", { type: "range", min: 0, max: 1, step: 0.05, value: prior.prior_correction, class: "prior-slider" });
  const tauText = el("span", { class: "tau" });
  const redraw = () => {
    const tau = Number(slider.value);
    const probs = reprior(base, prior.class_weights, prior.prior_correction, tau);
    const best = probs.indexOf(Math.max(...probs));
    const stars = /^\d+$/.test(labels[best]) ? `${labels[best]} star${labels[best] === "1" ? "" : "s"}` : labels[best];
    decision.replaceChildren(el("span", { class: "label", "data-label": labels[best] }, stars), ` (p = ${probs[best].toFixed(2)})`);
    card.dataset.label = labels[best];
    tauText.textContent = `prior correction ${tau.toFixed(2)} (0: the trained model as is; 1: its training class weights divided out)`;
    bars.replaceChildren(...labels.map((c, k) => el("div", { class: "bar-row" }, el("span", { class: "bar-label" }, c),
      el("span", { class: "bar", style: `width: ${(probs[k] * 100).toFixed(1)}%`, "data-probability": probs[k].toFixed(5) }),
      el("span", { class: "bar-value" }, probs[k].toFixed(3)))));
  };
  slider.addEventListener("input", redraw);
  card.append(decision, bars, el("label", { class: "row" }, tauText, slider));
  card.append(el("p", { class: "legend-line" }, el("span", { class: "swatch sentence-swatch" }), " sentence weight (left border; number) ",
    el("span", { class: "swatch word-swatch" }), " word weight x its sentence's, relative to the document's largest (hover: the word's own weight)"));
  const text = el("div", { class: "document" });
  // a word's shade is its weight times its sentence's, scaled by the document's largest: a sentence the
  // model hardly read shows faint words (scaling per sentence made every sentence show a full-red word)
  const effective = result.word_weights.map((ww, j) => ww.map((w) => w * result.sentence_weights[j]));
  const top = Math.max(...effective.flat(), 1e-9);
  result.sentences.forEach((words, j) => {
    const sw = result.sentence_weights[j];
    const row = el("p", { class: "sentence", "data-weight": sw.toFixed(5), style: `border-left-color: rgba(33, 102, 172, ${Math.max(sw, 0.05).toFixed(4)})` },
      el("span", { class: "sentence-weight" }, sw.toFixed(2)));
    const ww = result.word_weights[j];
    words.forEach((word, k) => {
      const unread = j >= state.limits.max_sentences || k >= state.limits.max_words;
      const node = el("span", { class: unread ? "word unread" : "word", "data-weight": ww[k].toFixed(5), title: unread ? "not read by the model" : `word weight ${ww[k].toFixed(3)} in its sentence; shade ${(effective[j][k] / top).toFixed(3)} (x sentence weight ${sw.toFixed(3)}, relative to the largest)` }, word);
      if (!unread) {
        node.dataset.shade = (effective[j][k] / top).toFixed(5);
        node.style.backgroundColor = `rgba(214, 69, 36, ${node.dataset.shade})`;
      }
      row.append(node, " ");
    });
    text.append(row);
  });
  if (result.unread_words) card.append(el("p", { class: "warning" }, `${result.unread_words} words past the model's limits were not read (dotted).`));
  card.append(text);
  redraw();
  return card;
}

function showClassifications(data) {
  const box = document.getElementById("classify-results");
  box.replaceChildren(...data.results.map((r, i) => classificationCard(r, data.prior, i)));
}

// ---- align view ------------------------------------------------------------------------------------

function alignmentCard(result, index) {
  const card = el("article", { class: "card alignment-card", "data-index": index });
  const step = 80, n = Math.max(result.source_words.length, result.target_words.length);
  const root = svg("svg", { xmlns: SVG, class: "alignment", width: n * step + 40, height: 150 });
  const x = (i) => 20 + i * step + step / 2;
  (result.missed || []).forEach(([s, t]) => root.append(svg("line", { x1: x(s), y1: 30, x2: x(t), y2: 118, class: "missed" })));
  result.links.forEach(([s, t], k) => {
    const kind = result.status && result.status.length ? result.status[k] : "predicted";
    root.append(svg("line", { x1: x(s), y1: 30, x2: x(t), y2: 118, class: `align ${kind}`, "data-status": kind }));
  });
  result.source_words.forEach((w, i) => root.append(svg("text", { x: x(i), y: 20, "text-anchor": "middle" }, w)));
  result.target_words.forEach((w, i) => root.append(svg("text", { x: x(i), y: 138, "text-anchor": "middle" }, w)));
  card.append(root);
  return card;
}

function showAlignments(data) {
  const box = document.getElementById("align-results");
  const cards = data.results.map((r, i) => alignmentCard(r, i));
  const swatch = (kind, text) => el("span", { class: "legend-item" }, el("span", { class: `swatch link-${kind}` }), ` ${text}`);
  if (data.score) {
    const s = data.score;
    cards.unshift(el("p", { class: "aer" }, `AER ${s.aer}  precision ${s.precision}  recall ${s.recall}  `,
      swatch("sure", "sure"), swatch("possible", "possible"), swatch("wrong", "wrong"), swatch("missed", "missed sure (dashed)")));
  } else {
    cards.unshift(el("p", { class: "aer" }, `${data.results.length} sentence pair${data.results.length === 1 ? "" : "s"}; `, swatch("predicted", "predicted link (no gold links given)")));
  }
  box.replaceChildren(...cards);
}

// ---- compare and notebook views --------------------------------------------------------------------

function showComparisons(data) {
  // two translators of one direction: per sentence both outputs and attentions side by side, most
  // disagreeing first (Python sorted them), with each one's BLEU and entropy and their agreement
  const box = document.getElementById("compare-results");
  const [nameA, nameB] = data.models;
  const summary = el("p", { class: "score compare-summary" }, data.summary);
  const items = data.items.map((item, i) => {
    const article = el("article", { class: "card compare-item", "data-index": i, "data-agreement": item.agreement });
    article.append(el("p", { class: "source" }, item.source), el("p", { class: "score" }, item.metrics));
    const pair = el("div", { class: "compare-pair" });
    [[nameA, item.a], [nameB, item.b]].forEach(([name, result], side) => {
      const column = el("div", { class: "compare-side", "data-model": name });
      column.append(el("h3", {}, name), translationCard(result, 2 * i + side));
      pair.append(column);
    });
    article.append(pair);
    return article;
  });
  box.replaceChildren(summary, ...items);
}

function addPicker(box) {
  // a notebook's list of results: one card at a time, chosen by its text
  if (!box) return;
  const cards = [...box.querySelectorAll(":scope > article")];
  if (cards.length < 2) return;
  const label = (c, i) => `${i + 1}. ${(c.querySelector(".source, .document, .caption") || c).textContent.slice(0, 80)}`;
  const picker = el("select", { class: "result-picker", "aria-label": "result" }, ...cards.map((c, i) => el("option", { value: i }, label(c, i))));
  const choose = () => cards.forEach((c, i) => { c.hidden = i !== Number(picker.value); });
  picker.addEventListener("change", choose);
  box.prepend(el("label", { class: "row" }, `${cards.length} results: `, picker));
  choose();
}

function showInitial(view) {
  // a notebook's chosen view (matrix, head, model) in every card that offers it
  document.querySelectorAll("select.view-select").forEach((sel) => {
    if ([...sel.options].some((o) => o.value === view)) { sel.value = view; sel.dispatchEvent(new Event("change")); }
  });
}

// ---- wiring ----------------------------------------------------------------------------------------

function showView(name) {
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== `view-${name}`; });
  document.querySelectorAll("#tabs a").forEach((a) => a.classList.toggle("current", a.dataset.view === name));
}

function fillModels(id, models) {
  const node = document.getElementById(id);
  node.replaceChildren(...models.map((m) => el("option", { value: m.name }, `${m.name} (${m.backend})`)));
}

function fillMaps() {
  // the attention maps that apply to the chosen translator (rollout and flow: Transformers; ...)
  const name = document.getElementById("translate-model").value;
  const chosen = (state.models.translators || []).find((t) => t.name === name) || {};
  const node = document.getElementById("translate-map"), keep = node.value;
  const maps = chosen.attention_maps || ["attention"];
  node.replaceChildren(...maps.map((m) => el("option", { value: m }, m)));
  node.value = maps.includes(keep) ? keep : "attention";
}

function lines(id) {
  return document.getElementById(id).value.split("\n").map((s) => s.trim()).filter((s) => s);
}

function busy(form, promise) {
  // an error replaces the view's stale results with itself, in the results area, not only in the corner
  const button = form.querySelector("button[type=submit]");
  const results = document.getElementById(form.id.replace("-form", "-results"));
  button.disabled = true;
  status("working\u2026");
  return promise.then(() => status("")).catch((e) => {
    status(e.message, true);
    if (results) results.replaceChildren(el("p", { class: "error-block", role: "alert" }, e.message));
  }).finally(() => { button.disabled = false; });
}

function wireForms() {
  document.getElementById("translate-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const beam = Number(document.getElementById("translate-beam").value);
    const body = {
      sentences: lines("translate-input"), beam, n_best: Math.min(Number(document.getElementById("translate-nbest").value), beam),
      model: document.getElementById("translate-model").value || undefined,
      attention_map: document.getElementById("translate-map").value,
    };
    const chosen = (state.models.translators || []).find((t) => t.name === body.model) || (state.models.translators || [])[0];
    busy(event.target, api("/api/translate", body).then((data) => showTranslations(data.results, layerLoader(body, chosen))));
  });
  document.getElementById("classify-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = document.getElementById("classify-input").value;
    const body = { documents: [text], model: document.getElementById("classify-model").value || undefined };
    busy(event.target, api("/api/classify", body).then(showClassifications));
  });
  document.getElementById("align-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const gold = document.getElementById("align-gold").value.trim();
    const body = {
      sources: lines("align-src"), targets: lines("align-tgt"), method: document.getElementById("align-method").value,
      model: document.getElementById("align-model").value || undefined, ...(gold ? { gold } : {}),
    };
    busy(event.target, api("/api/align", body).then(showAlignments));
  });
  [["align-src-file", "align-src"], ["align-tgt-file", "align-tgt"], ["align-gold-file", "align-gold"]].forEach(([file, area]) => {
    document.getElementById(file).addEventListener("change", async (event) => {
      const chosen = event.target.files[0];
      if (chosen) document.getElementById(area).value = await chosen.text();
    });
  });
}

async function start() {
  const tabs = () => showView((location.hash || "#translate").slice(1));
  window.addEventListener("hashchange", tabs);
  const embedded = document.getElementById("attnkit-data");
  if (embedded) {  // a static export: show the embedded results, no server
    const data = JSON.parse(embedded.textContent);
    document.body.classList.add("static");
    if (data.notebook) document.body.classList.add("notebook");
    document.querySelectorAll("form.controls, #tabs").forEach((f) => { f.hidden = true; });
    if (data.limits) state.limits = data.limits;
    showView(data.view);
    (data.results || []).forEach((r) => {  // a notebook's layer maps come as per-mille integers
      if (r.layer_attention_milli) r.layer_attention = r.layer_attention_milli.map((l) => l.map((h) => h.map((row) => row.map((v) => v / 1000))));
    });
    if (data.view === "translate") showTranslations(data.results);
    if (data.view === "classify") showClassifications(data);
    if (data.view === "caption") showCaptions(data.results);
    if (data.view === "heads") showHeads(data.report);
    if (data.view === "align") showAlignments(data);
    if (data.view === "compare") showComparisons(data);
    if (data.initial) showInitial(data.initial);
    if (data.picker) addPicker(document.getElementById(`${data.view}-results`));
    if (data.note) status(data.note);
    document.body.dataset.ready = "true";
    return;
  }
  tabs();
  wireForms();
  wireCaption();
  wireHeads();
  try {
    state.models = await api("/api/models");
    state.limits = state.models.classifier_reads;
    fillModels("translate-model", state.models.translators);
    fillMaps();
    document.getElementById("translate-model").addEventListener("change", fillMaps);
    fillModels("align-model", state.models.translators);
    fillModels("classify-model", state.models.classifiers);
    fillModels("caption-model", state.models.captioners || []);
    document.body.dataset.ready = "true";
  } catch (e) {
    status(`cannot reach the server: ${e.message}`, true);
  }
}

start();
