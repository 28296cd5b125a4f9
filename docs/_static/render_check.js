// Only with ?render-check in the address (tests/test_docs_render.py opens pages so in headless
// Chromium): after layout, write into the page whether any code block is cut (wider than its box
// and not scrollable), whether the page lists a metric's arguments and whether its formulas were
// typeset by MathJax (the report waits for MathJax's startup). Does nothing otherwise.
(function () {
  if (!/[?&]render-check\b/.test(window.location.search)) return;
  function whenTypeset(then) {
    var mj = window.MathJax;
    var ready = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    ready.then(then, then);
  }
  window.addEventListener("load", function () { whenTypeset(writeReport); });
  function writeReport() {
    var blocks = Array.prototype.slice.call(document.querySelectorAll("pre"));
    var cut = blocks.filter(function (pre) {
      var overflowX = window.getComputedStyle(pre).overflowX;
      var scrolls = overflowX === "auto" || overflowX === "scroll";
      return pre.scrollWidth > pre.clientWidth && !scrolls;
    });
    var wider = blocks.filter(function (pre) { return pre.scrollWidth > pre.clientWidth; });
    var headers = Array.prototype.slice.call(document.querySelectorAll("th")).map(function (th) {
      return th.textContent.trim();
    });
    // the width of a 100-character line in a code block's font: does the column hold it?
    var hundred = 0;
    if (blocks.length) {
      var probe = document.createElement("pre");
      probe.className = blocks[0].className;
      probe.style.cssText = "position:absolute;visibility:hidden;width:auto;overflow:visible;display:inline-block";
      probe.textContent = new Array(101).join("x");
      blocks[0].parentNode.appendChild(probe);
      hundred = probe.scrollWidth;
      probe.parentNode.removeChild(probe);
    }
    var report = {
      hundred_chars_px: hundred,
      narrowest_pre_px: Math.min.apply(null, [1e9].concat(blocks.map(function (p) { return p.clientWidth; }))),
      pre_blocks: blocks.length,
      cut_blocks: cut.length,
      scrolling_blocks: wider.length,
      widest_pre_px: Math.max.apply(null, [0].concat(blocks.map(function (p) { return p.clientWidth; }))),
      parameters_table: headers.indexOf("argument") >= 0 && headers.indexOf("default") >= 0,
      math_blocks: document.querySelectorAll("div.math").length,
      // a formula shown as math: MathJax replaced its TeX by an mjx-container; raw: TeX left as text
      typeset_math_blocks: document.querySelectorAll("div.math mjx-container").length,
      raw_tex_blocks: Array.prototype.filter.call(document.querySelectorAll("div.math"), function (div) {
        return !div.querySelector("mjx-container") && /\\[[(]|\\frac|\\text/.test(div.textContent);
      }).length,
      window_width: window.innerWidth
    };
    var out = document.createElement("script");
    out.type = "application/json";
    out.id = "render-check-result";
    out.textContent = JSON.stringify(report);
    document.body.appendChild(out);
  }
})();
