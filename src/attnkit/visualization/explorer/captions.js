// attnkit explorer: the Caption view (Show, Attend and Tell). Loaded before explorer.js, whose helpers
// (el, api, busy, status) it calls at run time. Each word's attention is an h x w grid of cells laid over
// the image; cell (i, j) covers rows i*H/h..(i+1)*H/h and columns j*W/w..(j+1)*W/w of the image as given.
"use strict";

function captionOverlay(grid) {
  const [h, w] = grid;
  const overlay = el("div", { class: "cap-overlay", style: `grid-template-rows: repeat(${h}, 1fr); grid-template-columns: repeat(${w}, 1fr)` });
  for (let k = 0; k < h * w; k++) overlay.append(el("div", { class: "cap-cell", "data-weight": "0" }));
  return overlay;
}

const SHADE_FLOOR = 0.1;  // shading is weight / max(peak, 0.1): a map spread thin stays faint (as in the figure)

function paintOverlay(overlay, map) {
  const flat = map.flat();
  const top = Math.max(Math.max(...flat), SHADE_FLOOR);
  overlay.querySelectorAll(".cap-cell").forEach((cell, k) => {
    cell.dataset.weight = flat[k].toFixed(5);
    // at most 55% opaque, and the peak cell outlined: the strokes under the attention stay visible
    cell.style.backgroundColor = `rgba(214, 69, 36, ${(0.55 * flat[k] / top).toFixed(3)})`;
    cell.classList.toggle("peak", flat[k] === Math.max(...flat));
    cell.title = `weight ${flat[k].toFixed(3)}`;
  });
}

function captionCard(result, index) {
  const card = el("div", { class: "card caption-card", id: `caption-${index}` });
  const maps = [...result.attention, result.eos_attention];
  const words = [...result.tokens, "</s>"];
  const [height, width] = result.image_size;
  // drawn within a 576 px box whatever its size: small digits enlarged (up to 4x), large photos shrunk
  const scale = Math.min(4, 576 / Math.max(width, height));
  const [w, h] = [Math.round(width * scale), Math.round(height * scale)];
  const frame = el("div", { class: "cap-frame", style: `width: ${w}px; height: ${h}px` });
  const image = el("img", { src: result.image || "", alt: "the captioned image", width: w, height: h });
  const overlay = captionOverlay(result.grid);
  frame.append(image, overlay);
  const strip = el("div", { class: "strip cap-words" }, el("span", { class: "side" }, "word"));
  const label = el("p", { class: "score" });
  let current = 0;
  const show = (t) => {
    current = (t + maps.length) % maps.length;
    paintOverlay(overlay, maps[current]);
    strip.querySelectorAll(".tok").forEach((node, k) => node.classList.toggle("active", k === current));
    const peak = Math.max(...maps[current].flat());
    label.textContent = `step ${current + 1} of ${maps.length}: "${words[current]}", peak cell ${peak.toFixed(3)}`;
  };
  words.forEach((word, t) => {
    const chip = el("button", { type: "button", class: "tok", "data-step": t }, word);
    chip.addEventListener("mouseenter", () => show(t));
    chip.addEventListener("focus", () => show(t));
    strip.append(chip);
  });
  const back = el("button", { type: "button", class: "step", "aria-label": "previous word" }, "\u25c0");
  const next = el("button", { type: "button", class: "step", "aria-label": "next word" }, "\u25b6");
  back.addEventListener("click", () => show(current - 1));
  next.addEventListener("click", () => show(current + 1));
  card.append(
    el("p", { class: "source" }, result.source || `image ${index + 1}`),
    el("p", { class: "translation" }, result.caption || "(empty caption)"),
    el("p", { class: "score" }, `score ${result.score} (log-probability; length-normalized under beam search), grid ${result.grid[0]} x ${result.grid[1]}`),
    ...(result.warnings || []).map((note) => el("p", { class: "warning" }, note)),
    frame, strip, el("div", { class: "row" }, back, next, label),
  );
  if (result.n_best && result.n_best.length) {
    const list = el("ol", { class: "nbest", start: 2 });
    result.n_best.forEach((alt) => list.append(el("li", {}, `${alt.caption} (${alt.score})`)));
    card.append(el("p", { class: "score" }, "other captions of the beam"), list);
  }
  show(0);
  return card;
}

function showCaptions(results) {
  document.getElementById("caption-results").replaceChildren(...results.map(captionCard));
}

function readImage(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error(`cannot read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

function wireCaption() {
  const form = document.getElementById("caption-form");
  const picked = { images: [], names: [] };
  const take = async (files) => {
    const chosen = [...files].filter((f) => f.type.startsWith("image/") || f.name);
    picked.images = await Promise.all(chosen.map(readImage));
    picked.names = chosen.map((f) => f.name || "pasted image");
    document.getElementById("caption-picked").textContent = picked.names.join(", ");
  };
  document.getElementById("caption-file").addEventListener("change", (event) => take(event.target.files));
  document.addEventListener("paste", (event) => {
    if (document.getElementById("view-caption").hidden) return;
    const files = [...(event.clipboardData || {}).files || []];
    if (files.length) take(files).then(() => form.requestSubmit());
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!picked.images.length) { status("choose or paste an image first", true); return; }
    const beam = Number(document.getElementById("caption-beam").value);
    const body = {
      images: picked.images, beam, n_best: Math.min(Number(document.getElementById("caption-nbest").value), beam),
      model: document.getElementById("caption-model").value || undefined,
    };
    busy(form, api("/api/caption", body).then((data) => showCaptions(data.results.map((r, k) => (
      { ...r, image: picked.images[k], source: picked.names[k] })))));
  });
}
