#!/usr/bin/env node
// `npm run docs` runs this before TypeDoc: it writes the one custom script TypeDoc loads
// (typedoc.json "customJs"), made of Mermaid's standalone bundle (the devDependency
// `mermaid`) and a few lines that turn every ```mermaid code block of the guides into a
// picture when the page loads. TypeDoc prints those blocks as plain code (typedoc.json
// "ignoredHighlightLanguages"), which is also what a reader without JavaScript sees.
/* global __dirname */
const fs = require('node:fs');
const path = require('node:path');

const repo = path.resolve(__dirname, '..');
const bundle = fs.readFileSync(require.resolve('mermaid/dist/mermaid.min.js', { paths: [repo] }), 'utf8');
const init = `
;(function () {
  function draw() {
    var blocks = document.querySelectorAll('pre > code.mermaid, pre > code.language-mermaid');
    if (blocks.length === 0 || typeof mermaid === 'undefined') return;
    blocks.forEach(function (code) {
      var pre = code.parentElement;
      var div = document.createElement('div');
      div.className = 'mermaid';
      div.textContent = code.textContent;
      pre.replaceWith(div);
    });
    var dark = document.documentElement.dataset.theme === 'dark' ||
      (document.documentElement.dataset.theme !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default' });
    mermaid.run({ querySelector: 'div.mermaid' });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw);
  else draw();
})();
`;
const out = path.join(repo, '.build', 'typedoc', 'mermaid.js');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, bundle + init);
console.log(`typedoc-mermaid: wrote ${path.relative(repo, out)} (${Math.round((bundle.length + init.length) / 1024)} KB)`);
