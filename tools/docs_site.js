// The docs' only script: click-to-zoom on figures narrowed to fit the column, and the search box (Pagefind).
(function () {
  "use strict";

  // a figure shown smaller than its natural size gets a zoom-in cursor; a click opens it at full size
  function markZoomable(img) {
    if (img.naturalWidth > img.clientWidth + 2) img.classList.add("site-zoomable");
    else img.classList.remove("site-zoomable");
  }
  function zoomable() {
    document.querySelectorAll(".site-main img").forEach(function (img) {
      if (img.complete) markZoomable(img);
      else img.addEventListener("load", function () { markZoomable(img); });
    });
  }
  function closeZoom() {
    var z = document.querySelector(".site-zoom");
    if (z) z.remove();
  }
  document.addEventListener("click", function (e) {
    if (e.target.closest(".site-zoom")) { closeZoom(); return; }
    var img = e.target.closest(".site-main img.site-zoomable");
    if (!img || e.target.closest("a")) return;
    var z = document.createElement("div");
    z.className = "site-zoom";
    z.setAttribute("role", "dialog");
    z.setAttribute("aria-label", "figure at full size (click or Escape to close)");
    var big = document.createElement("img");
    big.src = img.src;
    big.alt = img.alt;
    z.appendChild(big);
    document.body.appendChild(z);
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") closeZoom(); });
  window.addEventListener("resize", zoomable);

  // Pagefind's UI fetches its index, which browsers refuse on file:// pages: there, say how to serve the site
  function search() {
    var box = document.getElementById("site-search");
    if (!box) return;
    if (location.protocol === "file:") {
      box.innerHTML = '<div class="site-search-note">Search works when the site is served: ' +
        "<code>python -m http.server -d _docs</code>, then open http://localhost:8000/</div>";
      return;
    }
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = "pagefind/pagefind-ui.css";
    document.head.appendChild(css);
    var s = document.createElement("script");
    s.src = "pagefind/pagefind-ui.js";
    s.onload = function () {
      new PagefindUI({ element: "#site-search", showSubResults: true, showImages: false, resetStyles: false });
    };
    document.head.appendChild(s);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { zoomable(); search(); });
  } else { zoomable(); search(); }
})();
