// The JavaScript the browser tool evaluates in the page: what the model reads after an action.
#pragma once

namespace forge::tools {

// Returns JSON text: {title, url, text, elements: [{tag, label, type, href, x, y}]}. Visible text
// is the text nodes in the viewport whose elements are shown; elements are the links, buttons,
// form fields and [onclick]/[role=button] elements in the viewport, with their centres on the
// 0–999 grid (Tolokaforge's observation). The C++ side bounds both.
inline constexpr const char* kObserveJs = R"JS((() => {
  const W = window.innerWidth, H = window.innerHeight;
  const inView = (r) => r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < H && r.right > 0 && r.left < W;
  const shown = (el) => {
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return false;
    }
    return true;
  };
  const texts = [];
  let size = 0;
  if (document.body) {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n && size < 8000; n = walk.nextNode()) {
      const t = n.textContent.replace(/\s+/g, ' ').trim();
      const p = n.parentElement;
      if (!t || !p || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(p.tagName)) continue;
      if (!inView(p.getBoundingClientRect()) || !shown(p)) continue;
      texts.push(t);
      size += t.length + 1;
    }
  }
  const norm = (v) => (v || '').replace(/\s+/g, ' ').trim();
  const label = (e) => {
    for (const c of [e.innerText, e.value && e.type !== 'password' ? e.value : '', e.getAttribute('aria-label'),
                     e.getAttribute('title'), e.getAttribute('placeholder'), e.getAttribute('name')]) {
      const n = norm(c);
      if (n) return n.substring(0, 60);
    }
    return '';
  };
  const elements = [], seen = new Set();
  for (const e of document.querySelectorAll('a,button,input,select,textarea,[onclick],[role=button],[contenteditable=true]')) {
    if (elements.length >= 120) break;
    if (e.type === 'hidden') continue;
    const r = e.getBoundingClientRect();
    if (!inView(r) || !shown(e)) continue;
    const x = Math.min(999, Math.round((Math.max(r.left, 0) + Math.min(r.right, W)) / 2 / W * 1000));
    const y = Math.min(999, Math.round((Math.max(r.top, 0) + Math.min(r.bottom, H)) / 2 / H * 1000));
    const l = label(e), key = x + ',' + y + ',' + l;
    if (seen.has(key)) continue;
    seen.add(key);
    elements.push({tag: e.tagName.toLowerCase(), label: l, type: e.getAttribute('type') || '',
                   href: e.tagName === 'A' ? (e.href || '') : '', x, y});
  }
  return JSON.stringify({title: document.title, url: location.href, text: texts.join('\n'), elements});
})())JS";

// Empties the focused field (type_text_at's clear_before_typing) as a user selecting all and
// deleting would, so the page's input handlers see it.
inline constexpr const char* kClearFocusedJs = R"JS((() => {
  const e = document.activeElement;
  if (!e) return false;
  if ('value' in e) { e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); return true; }
  if (e.isContentEditable) { e.textContent = ''; return true; }
  return false;
})())JS";

// select: picks the option whose label, text or value is `text` in the <select> at a point.
// Called as a function with (x, y, text); returns a word saying what happened.
inline constexpr const char* kSelectJs = R"JS(function(x, y, text) {
  let e = document.elementFromPoint(x, y);
  while (e && e.tagName !== 'SELECT') e = e.parentElement;
  if (!e) return 'no-select';
  const want = String(text).trim().toLowerCase();
  for (let i = 0; i < e.options.length; i++) {
    const o = e.options[i];
    if ([o.label, o.text, o.value].some((v) => (v || '').trim().toLowerCase() === want)) {
      e.selectedIndex = i;
      e.dispatchEvent(new Event('input', {bubbles: true}));
      e.dispatchEvent(new Event('change', {bubbles: true}));
      return 'selected';
    }
  }
  return 'no-option';
})JS";

}  // namespace forge::tools
