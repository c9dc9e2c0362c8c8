"""Open every page of _docs/ in headless Chromium and fail on what a reader would see as broken.

Fails on: a console error or uncaught page error, a local resource that does not load, an image that does not
load or has no alt text, a sidebar / table-of-contents / in-page link to a page, anchor or file that does not exist,
raw markdown or Quarto artefacts in the text (`{target=`, `](`, `$$`, unrendered `$…$`, `In [0]`, a backtick in a
markdown cell's prose or in an API signature's comment), a stderr block, a duplicate id; at 1280 px, code or
output cut off at the column's edge (an element of the page wider than its box that neither scrolls nor sits in
something that does), an API signature wider than its box (`pre.signature`: it wraps, so even a scrolling one is a
signature partly out of sight), a link in the prose styled like inline code (no underline, or the colour of code)
and a figure whose click-to-zoom copy is cut at the window's right edge; at 390 px (a phone), a page wider than the
screen, a signature wider than its box, and a table that scrolls sideways without its hint (the caption and faded
edge of nbs/styles.css) or one that fits but shows it. No signature block on any page fails too. Then serves
_docs/ over http and searches for `nc_row` in the search box (Pagefind), waiting up to two minutes for the index to
load and the results to fill in: no result fails, saying whether the index or the box never answered, and so does
a `¶` in the results' titles or excerpts (a heading's anchor link indexed). And README.md: a link to a host
nothing publishes (magicarp-nb.github.io, github.com/magicarp-nb), a relative link to a file that does not exist,
a numbered notebook or runner of nbs/ it never names.

Screenshots of the landing page, 08_trainer, 12_gradcache, the figures page and every runner's page that shows an
executed record (nbs/records/) at 1280 and 390 px go to build/docs-shots/ (long pages in clips of 1,400 px).

    python tools/check_docs.py                 # Debian's chromium at /usr/bin/chromium
    python tools/check_docs.py --no-shots
    python tools/check_docs.py --shots-dir /tmp/shots
"""

import argparse
import functools
import http.server
import re
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "_docs"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]  # fmt: skip
CLIP, MAX_CLIPS, WIDTH, PHONE = 1400, 8, 1280, 390
SHOTS = ["index.html", "trainer.html", "gradcache.html", "figures.html"]
SEARCH = "nc_row"  # a function of 09b_measures: the search must find it
SEARCH_WAIT = 120  # seconds the search step waits for Pagefind's index and the box's results (a loaded machine)
UNPUBLISHED = re.compile(r"https?://(?:magicarp-nb\.github\.io|github\.com/magicarp-nb)\b[^)\s\"'>]*")
NO_ALT = "No description has been provided for this image"
RECORD_NOTE = "This page shows an executed record"  # render_docs.py's note on a runner's page with a record

# Runs in the page once MathJax has typeset: what the reader sees, and every link and image.
INSPECT = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const main = document.querySelector('main') || document.body;
  const prose = main.cloneNode(true);
  prose.querySelectorAll('pre, code, .jp-InputArea, mjx-container, script, style').forEach(e => e.remove());
  const mdprose = [...prose.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')].map(e => e.innerText).join(' ');
  const where = a => a.closest('.site-sidebar') ? 'sidebar' : a.closest('.site-toc') ? 'toc'
    : a.closest('.site-prevnext') ? 'prev/next' : 'page';
  const links = [...document.querySelectorAll('a[href]')].map(a => ({href: a.getAttribute('href'), where: where(a)}));
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src').slice(0, 60),
    ok: i.complete && i.naturalWidth > 0, alt: i.getAttribute('alt') || '', nat: i.naturalWidth,
    shown: i.clientWidth, main: !!i.closest('main')}));
  return {prose: prose.innerText, all: main.innerText, mdprose, links, imgs,
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    stderr: document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"], .output_stderr').length,
    maths: document.querySelectorAll('mjx-container').length,
    sidebar: document.querySelectorAll('.site-sidebar a').length, height: document.documentElement.scrollHeight};
}"""

# Runs in the served page: Pagefind's own API (the module the search box imports), loaded and asked for the term.
INDEX_PROBE = """async (term) => {
  try {
    const pagefind = await import('./pagefind/pagefind.js');
    await pagefind.init();
    const r = await pagefind.search(term);
    const texts = [];
    for (const hit of r.results.slice(0, 5)) {
      const d = await hit.data();
      texts.push(d.meta.title || '', d.excerpt, ...d.sub_results.map(s => s.title + ' :: ' + s.excerpt));
    }
    return {loaded: true, n: r.results.length, texts: texts.map(t => t.replace(/<[^>]+>/g, ''))};
  } catch (e) { return {loaded: false, error: String(e)}; }
}"""

# Runs in the page after INSPECT: what does not fit. An element wider than its box is cut off when it hides its
# overflow, or spills out of the column when it shows it without a scrolling element around it.
LAYOUT = """async () => {
  // two frames: the tables' scroll timelines (their hint) are resolved after layout, not at the load event
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const main = document.querySelector('main') || document.body;
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const cut = [];
  for (const e of main.querySelectorAll('*')) {
    if (!e.clientWidth || e.scrollWidth <= e.clientWidth + 1 || scrolls(e)) continue;
    if (cut.some(c => c.contains(e))) continue;
    const ox = getComputedStyle(e).overflowX;
    let inside = false;
    for (let a = e.parentElement; a && a !== main.parentElement; a = a.parentElement) {
      if (scrolls(a)) { inside = true; break; }
    }
    if (ox === 'visible' && inside) continue;
    cut.push(e);
  }
  const what = e => e.tagName.toLowerCase()
    + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '');
  const look = e => { const s = getComputedStyle(e); return s.color + '|' + s.backgroundColor; };
  const prose = [...main.querySelectorAll('.jp-RenderedHTMLCommon a[href]:not(.anchor-link)')]
    .filter(a => !a.closest('pre'));
  const codes = new Set([...main.querySelectorAll('.jp-RenderedHTMLCommon code')]
    .filter(c => !c.closest('a') && !c.closest('pre')).map(look));
  const badLinks = prose.filter(a => {
    if (!getComputedStyle(a).textDecorationLine.includes('underline')) return true;
    const c = a.querySelector('code');
    return c ? codes.has(look(c)) : codes.has(look(a));
  }).map(a => a.getAttribute('href'));
  const doc = document.documentElement;
  const heading = e => {
    const h = (e.parentElement.matches('div.highlight') ? e.parentElement : e).previousElementSibling;
    return h && h.id ? h.id : '?';
  };
  // a show_doc entry's signature: a pre.signature, or the code block after a heading that follows the module's file
  const entries = [...main.querySelectorAll('h2, h3, h4')].filter(h => h.previousElementSibling
    && h.previousElementSibling.querySelector('.site-src')).map(h => h.nextElementSibling)
    .map(e => e && e.matches('div.highlight') ? e.querySelector('pre') : e).filter(e => e && e.matches('pre'));
  const sigs = [...new Set([...main.querySelectorAll('pre.signature'), ...entries])];
  const wideSigs = sigs.filter(p => p.scrollWidth > p.clientWidth + 1)
    .map(p => ({what: heading(p), lost: p.scrollWidth - p.clientWidth}));
  const tables = [...main.querySelectorAll('.jp-RenderedMarkdown table, .jp-RenderedHTML table')];
  const hinted = t => { const s = getComputedStyle(t, '::before');
    return s.content.includes('scroll') && parseFloat(s.opacity) > 0.5 && parseFloat(s.maxHeight) > 0; };
  const wide = t => t.scrollWidth > t.clientWidth;  // as the CSS sees it: a table that scrolls at all has a timeline
  return {cut: cut.map(e => ({what: what(e), lost: e.scrollWidth - e.clientWidth})), links: prose.length,
    badLinks, pageWidth: doc.scrollWidth, viewWidth: doc.clientWidth, sigs: sigs.length, wideSigs,
    sigTicks: sigs.filter(p => [...p.querySelectorAll('.c1')].some(c => c.textContent.includes('`'))).map(heading),
    tables: tables.filter(wide).length, unhinted: tables.filter(t => wide(t) && !hinted(t)).length,
    falseHints: tables.filter(t => !wide(t) && hinted(t)).length};
}"""

# Runs in the page at 1280 px: the first figure narrowed to fit the column, clicked open (docs_site.js's zoom): where
# its zoomed copy ends against the window's right edge; null when no figure is narrowed.
ZOOM = """async () => {
  const img = document.querySelector('.site-main img.site-zoomable');
  if (!img) return null;
  img.click();
  const z = document.querySelector('.site-zoom');
  if (!z) return {opened: false};
  const big = z.querySelector('img');
  if (!big.complete) await new Promise(r => { big.onload = r; big.onerror = r; });
  const box = big.getBoundingClientRect(), shown = z.clientWidth;
  z.click();
  return {opened: true, right: Math.round(box.right), window: shown, alt: img.alt.slice(0, 60)};
}"""

ARTEFACTS = [  # (what, pattern, where: prose = text outside code blocks, all = any text on the page)
    ("quarto attributes", re.compile(r"\{target="), "all"),
    ("raw markdown link", re.compile(r"\]\((?:https?:|[\w./-]+\.html)"), "all"),
    ("raw markdown link", re.compile(r"\]\("), "prose"),
    ("raw display maths", re.compile(r"\$\$"), "prose"),
    ("raw inline maths", re.compile(r"(?<![\w$])\$[^$\s][^$\n]*?\$(?![\w$])"), "prose"),
    ("input prompt", re.compile(r"In \[\d*\]"), "all"),
    ("escaped pipe", re.compile(r"\\\|"), "all"),
    ("raw backtick (code not rendered as code)", re.compile(r"`"), "mdprose"),
]


def _shoot(page, p: Path, **kw):
    "One capture; a cold Chromium (fonts, first paint) can take long on a busy machine, so one retry before giving up."
    for attempt in (1, 2):
        try:
            return page.screenshot(path=str(p), full_page=True, timeout=90_000, **kw)
        except PlaywrightTimeout:
            if attempt == 2:
                raise SystemExit(f"docs-check: the screenshot {p.name} timed out twice (90 s each)") from None
            print(f"docs-check: the screenshot {p.name} timed out once (90 s); taking it again", flush=True)


def screenshot(page, path: Path, height: int, width: int):
    "Full-page screenshot; long pages in clips of CLIP px (a single capture past ~8,000 px repeats content)."
    if height <= CLIP:
        _shoot(page, path)
        return [path]
    out = []
    for k, y in enumerate(range(0, min(height, CLIP * MAX_CLIPS), CLIP)):
        p = path.with_name(f"{path.stem}-{k + 1}.png")
        _shoot(page, p, clip={"x": 0, "y": y, "width": width, "height": min(CLIP, height - y)})
        out.append(p)
    return out


def page_problems(info) -> list[str]:
    "What a reader would see as broken on one page: images, stderr blocks, no sidebar, raw artefacts, layout."
    bad = [f"image does not load: {i['src']}" for i in info["imgs"] if not i["ok"]]
    dup = sorted({i for i in info["ids"] if info["ids"].count(i) > 1})
    if dup:
        bad.append(f"duplicate ids: {', '.join(dup[:8])}")
    bad += layout_problems(info["layout"], info["phone"])
    bad += zoom_problems(info.get("zoom"))
    bad += [f"image without alt text: {i['src']}" for i in info["imgs"] if not i["alt"].strip() or i["alt"] == NO_ALT]
    if info["stderr"]:
        bad.append(f"{info['stderr']} stderr block(s)")
    if not info["sidebar"]:
        bad.append("no sidebar")
    for what, rx, where in ARTEFACTS:
        text = info[where]
        m = rx.search(text)
        if m:
            bad.append(f"{what}: …{text[max(0, m.start() - 40) : m.end() + 40]!r}…")
    return bad


def layout_problems(wide, phone) -> list[str]:
    "What does not fit (LAYOUT's answers at 1280 and 390 px): cut elements, wide signatures, unhinted tables, links."
    bad = []
    if wide["cut"]:
        worst = max(wide["cut"], key=lambda c: c["lost"])
        bad.append(
            f"{len(wide['cut'])} element(s) cut off at {WIDTH} px (worst: {worst['what']}, {worst['lost']} px hidden)"
        )
    for where, layout in ((WIDTH, wide), (PHONE, phone)):
        if layout["wideSigs"]:
            worst = max(layout["wideSigs"], key=lambda c: c["lost"])
            bad.append(f"{len(layout['wideSigs'])} API signature(s) wider than their box at {where} px (worst: "
                       f"{worst['what']}, {worst['lost']} px out of sight)")  # fmt: skip
    if wide["sigTicks"]:
        bad.append(
            f"raw backticks in the comments of {len(wide['sigTicks'])} API signature(s), e.g. {wide['sigTicks'][0]}"
        )
    if phone["unhinted"]:
        bad.append(f"{phone['unhinted']} table(s) scroll sideways at {PHONE} px without the 'scroll sideways' hint")
    if phone["falseHints"]:
        bad.append(f"{phone['falseHints']} table(s) fit at {PHONE} px but show the 'scroll sideways' hint")
    if wide["badLinks"]:
        bad.append(f"{len(wide['badLinks'])} link(s) styled like code, e.g. {wide['badLinks'][0]}")
    if phone["pageWidth"] > phone["viewWidth"]:
        bad.append(f"at {PHONE} px the page is {phone['pageWidth']} px wide: it scrolls sideways")
    return bad


def zoom_problems(zoom) -> list[str]:
    "A narrowed figure that does not open, or whose zoomed copy is cut at the window's right edge (ZOOM's answer)."
    if zoom is None:
        return []
    if not zoom["opened"]:
        return [f"a click on a narrowed figure opens no zoom ({zoom['alt']!r})"]
    if zoom["right"] > zoom["window"]:
        beyond = zoom["right"] - zoom["window"]
        return [f"the zoomed figure {zoom['alt']!r} is cut at the right edge at {WIDTH} px ({beyond} px beyond)"]
    return []


def link_problems(path, info, seen) -> tuple[list[str], int, int]:
    "Local links to a page or anchor that does not exist (external links are not followed offline)."
    bad, n_local, n_external = [], 0, 0
    for link in info["links"]:
        u = urlparse(link["href"])
        if u.scheme in ("http", "https", "mailto"):
            n_external += 1
            continue
        n_local += 1
        target = Path(unquote(u.path)).name if u.path else path.name
        if u.path and not u.path.endswith(".html"):
            if not (path.parent / unquote(u.path)).exists():
                bad.append(f"{link['where']} link to a missing file: {link['href']}")
            continue
        if target not in seen:
            bad.append(f"{link['where']} link to a missing page: {link['href']}")
        elif u.fragment and u.fragment not in seen[target] and unquote(u.fragment) not in seen[target]:
            bad.append(f"{link['where']} link to a missing anchor: {link['href']}")
    return bad, n_local, n_external


def visit(pages, chromium, to_shoot, shot_dir):
    "Open each page at 1280 px, then at 390 px; its inspection and the errors the browser reported while loading it."
    report, errors = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: errors.append(f"failed to load {r.url[:120]}: {r.failure}"))
        for path in pages:
            errors.clear()
            page.goto(path.as_uri(), wait_until="load")
            info = page.evaluate(INSPECT)
            info["layout"] = page.evaluate(LAYOUT)
            info["zoom"] = page.evaluate(ZOOM)
            report.append((path, info, list(errors)))
            if path.name in to_shoot:
                screenshot(page, shot_dir / f"{path.stem}-{WIDTH}.png", info["height"], WIDTH)
        phone = browser.new_page(viewport={"width": PHONE, "height": 844}, device_scale_factor=1, is_mobile=True)
        for path, info, _ in report:
            phone.goto(path.as_uri(), wait_until="load")
            info["phone"] = phone.evaluate(LAYOUT)
            if path.name in to_shoot:
                height = phone.evaluate("document.documentElement.scrollHeight")
                screenshot(phone, shot_dir / f"{path.stem}-{PHONE}.png", height, PHONE)
        report.append(search(browser))
        browser.close()
    return report


def search(browser):
    """Serve _docs/ over http (Pagefind fetches its index) and type SEARCH into the sidebar's search box.

    Pagefind loads its index (a wasm module, then chunks) on first use and fills each result in after its
    fragment loads: on a loaded machine that takes seconds. The step waits, polling up to SEARCH_WAIT seconds, until
    the index answers (through Pagefind's own API, what the box calls) and the box shows result links, and says
    which of the two never came."""
    handler = functools.partial(QuietHandler, directory=str(DOCS))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    errors, found = [], []
    try:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html", wait_until="load")
        deadline = time.time() + SEARCH_WAIT
        index = poll(lambda: page.evaluate(INDEX_PROBE, SEARCH), lambda r: r.get("n"), deadline)
        if not index.get("loaded"):
            errors.append(
                f"search: the Pagefind index did not load within {SEARCH_WAIT} s ({index.get('error', 'no answer')}); "
                "is _docs/pagefind/ there (make docs)?"
            )
        elif not index["n"]:
            errors.append(f"search: the Pagefind index loaded but finds nothing for {SEARCH!r}")
        else:
            pilcrow = next((t for t in index.get("texts", []) if "¶" in t), None)
            if pilcrow is not None:
                errors.append(
                    f"search: a result for {SEARCH!r} shows '¶' ({pilcrow[:80]!r}): a heading's anchor link is "
                    "indexed; render_docs marks them data-pagefind-ignore"
                )
            found = search_box(page, deadline)
            if not found:
                errors.append(
                    f"search: the index finds {index['n']} page(s) for {SEARCH!r}, but the search box showed no "
                    f"result link within {SEARCH_WAIT} s"
                )
        page.close()
    finally:
        server.shutdown()
    return "search", found, list(dict.fromkeys(errors))  # each failed fetch once, however often the poll asked


def poll(ask, done, deadline, every=1.0):
    "Call `ask()` until `done(answer)` or the deadline; the last answer."
    while True:
        answer = ask()
        if done(answer) or time.time() >= deadline:
            return answer
        time.sleep(every)


def search_box(page, deadline) -> list[str]:
    "Type SEARCH into the box (again, while it shows no result link) until the deadline; the result links."
    box = ".pagefind-ui__search-input"
    try:
        page.wait_for_selector(box, timeout=max(1000, (deadline - time.time()) * 1000))
    except Exception:  # playwright's TimeoutError: the box never appeared
        return []
    links = []
    while not links and time.time() < deadline:
        page.fill(box, "")
        page.fill(box, SEARCH)
        links = poll(
            lambda: page.eval_on_selector_all(".pagefind-ui__result-link", "as => as.map(a => a.getAttribute('href'))"),
            bool,
            min(deadline, time.time() + 15),
            every=0.5,
        )
    return links


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def readme_problems() -> list[str]:
    "README.md: links to hosts nothing publishes, relative links to missing files, notebooks it never names."
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bad = [f"link to a host nothing publishes: {u}" for u in sorted(set(UNPUBLISHED.findall(readme)))]
    for target in re.findall(r"\]\(([^)\s]+)\)", readme) + re.findall(r'(?:href|src)="([^"]+)"', readme):
        u = urlparse(target)
        if u.scheme or target.startswith("#"):
            continue
        if not (ROOT / unquote(u.path)).exists():
            bad.append(f"relative link to a missing file: {target}")
    nbs = sorted(p.stem for p in (ROOT / "nbs").glob("*.ipynb") if re.match(r"(\d|run_)", p.name))
    missing = [n for n in nbs if not re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", readme)]
    if missing:
        bad.append(f"notebooks the README never names: {', '.join(missing)}")
    return bad


def layout_totals(report) -> list[str]:
    """Print what the pages hold of API signatures, tables that scroll on a phone and figures narrowed to fit the
    column (their text shrinks with them); a problem if no page has a signature block (render_docs makes them)."""
    sigs = sum(info["layout"]["sigs"] for _, info, _ in report)
    wide_sigs = sum(len(info[w]["wideSigs"]) for _, info, _ in report for w in ("layout", "phone"))
    tables = sum(info["phone"]["tables"] for _, info, _ in report)
    hinted = tables - sum(info["phone"]["unhinted"] for _, info, _ in report)
    shrunk = [(i["shown"] / i["nat"], path.name) for path, info, _ in report for i in info["imgs"]
              if i["main"] and i["nat"] and i["shown"] < i["nat"] - 2]  # fmt: skip
    least = f" (smallest {min(shrunk)[0]:.2f}× on {min(shrunk)[1]})" if shrunk else ""
    print(
        f"docs-check: {sigs} API signature blocks, {wide_sigs} wider than their box; at {PHONE} px {tables} "
        f"table(s) scroll sideways, {hinted} with the hint; at {WIDTH} px {len(shrunk)} figure(s) narrowed to fit "
        f"the column{least}"
    )
    return [] if sigs else ["no API signature block (pre.signature) on any page: render_docs renders show_doc's"]


def main(chromium: str, shots: bool, shot_dir: Path) -> int:
    pages = sorted(p for p in DOCS.glob("*.html"))
    if not pages:
        sys.exit("docs-check: no pages in _docs/: run `make docs` first")
    if not Path(chromium).exists():
        sys.exit(f"docs-check: no browser at {chromium}: apt-get install -y chromium (Debian), or pass --chromium")
    if shots:
        shot_dir.mkdir(parents=True, exist_ok=True)
        for old in shot_dir.glob("*.png"):
            old.unlink()
    t0 = time.time()
    records = {p.name for p in pages if p.name.startswith("run_") and RECORD_NOTE in p.read_text(encoding="utf-8")}
    *report, (_, found, search_errors) = visit(pages, chromium, set(SHOTS) | records if shots else set(), shot_dir)
    seen = {path.name: set(info["ids"]) for path, info, _ in report}
    problems, n_local, n_external, n_cut, n_wide = [], 0, 0, 0, 0
    for path, info, errors in report:
        links, n, e = link_problems(path, info, seen)
        n_local, n_external = n_local + n, n_external + e
        n_cut += len(info["layout"]["cut"])
        n_wide += info["phone"]["pageWidth"] > info["phone"]["viewWidth"]
        bad = errors + page_problems(info) + links
        status = "ok  " if not bad else "FAIL"
        print(
            f"{status} {path.name:24} {len(info['links']):4} links {len(info['imgs']):3} images {info['maths']:4} maths"
        )
        problems += [f"{path.name}: {b}" for b in bad]
    pages_cut = sum(bool(info["layout"]["cut"]) for _, info, _ in report)
    problems += layout_totals(report)
    problems += [e if e.startswith("search: ") else f"search: {e}" for e in search_errors]
    if not found and not search_errors:
        problems.append(f"search: nothing found for {SEARCH!r}")
    problems += [f"README.md: {b}" for b in readme_problems()]
    print(
        f"docs-check: {len(report)} pages, {n_local} local links checked ({n_external} external not followed); "
        f"at {WIDTH} px {n_cut} element(s) cut off on {pages_cut} page(s); at {PHONE} px {n_wide} page(s) wider "
        f"than the screen; search for {SEARCH!r}: {len(found)} result(s) ({', '.join(found[:3])}); "
        f"{time.time() - t0:.1f}s in chromium"
    )
    if shots:
        names = ", ".join(sorted(p.name for p in shot_dir.glob("*.png")))
        print(f"docs-check: screenshots in {shot_dir}/: {names}")
    for p in problems:
        print("  " + p)
    if problems:
        print(f"docs-check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the browser executable (Debian's chromium)")
    ap.add_argument("--no-shots", action="store_true", help="skip the screenshots")
    ap.add_argument("--shots-dir", type=Path, default=ROOT / "build" / "docs-shots", help="where screenshots go")
    a = ap.parse_args()
    sys.exit(main(a.chromium, not a.no_shots, a.shots_dir.resolve()))
