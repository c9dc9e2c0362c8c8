"""Open every page of _docs/ in headless Chromium and fail on what a reader would see as broken.

Fails on: a console error or uncaught page error, a local resource that does not load, an image that does not
load or has no alt text, a sidebar / table-of-contents / in-page link to a page or anchor that does not exist,
raw markdown or Quarto artefacts in the text (`{target=`, `](`, `$$`, unrendered `$…$`, `In [0]`), a stderr
block. Saves screenshots of the landing page and the first page of each part to _docs/shots/ (long pages in
clips of 1,400 px).

    python tools/check_docs.py                 # Debian's chromium at /usr/bin/chromium
    python tools/check_docs.py --no-shots
"""

import argparse
import re
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "_docs"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]  # fmt: skip
CLIP, MAX_CLIPS, WIDTH = 1400, 8, 1400
NO_ALT = "No description has been provided for this image"

# Runs in the page once MathJax has typeset: what the reader sees, and every link and image.
INSPECT = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const main = document.querySelector('main') || document.body;
  const prose = main.cloneNode(true);
  prose.querySelectorAll('pre, code, .jp-InputArea, mjx-container, script, style').forEach(e => e.remove());
  const where = a => a.closest('.site-sidebar') ? 'sidebar' : a.closest('.site-toc') ? 'toc'
    : a.closest('.site-prevnext') ? 'prev/next' : 'page';
  const links = [...document.querySelectorAll('a[href]')].map(a => ({href: a.getAttribute('href'), where: where(a)}));
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src').slice(0, 60),
    ok: i.complete && i.naturalWidth > 0, alt: i.getAttribute('alt') || ''}));
  return {prose: prose.innerText, all: main.innerText, links, imgs,
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    stderr: document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"], .output_stderr').length,
    maths: document.querySelectorAll('mjx-container').length,
    sidebar: document.querySelectorAll('.site-sidebar a').length, height: document.documentElement.scrollHeight};
}"""

ARTEFACTS = [  # (what, pattern, where: prose = text outside code blocks, all = any text on the page)
    ("quarto attributes", re.compile(r"\{target="), "all"),
    ("raw markdown link", re.compile(r"\]\((?:https?:|[\w./-]+\.html)"), "all"),
    ("raw markdown link", re.compile(r"\]\("), "prose"),
    ("raw display maths", re.compile(r"\$\$"), "prose"),
    ("raw inline maths", re.compile(r"(?<![\w$])\$[^$\s][^$\n]*?\$(?![\w$])"), "prose"),
    ("input prompt", re.compile(r"In \[\d*\]"), "all"),
]


def shot_pages():
    "The landing page and the first page of each part of the sidebar."
    index = (DOCS / "index.html").read_text(encoding="utf-8")
    first = re.findall(r'<div class="site-part">[^<]*</div>\s*<ul>\s*<li[^>]*><a href="([^"]+)"', index)
    return [DOCS / "index.html", *(DOCS / f for f in first)]


def screenshot(page, path: Path, height: int):
    "Full-page screenshot; long pages in clips of CLIP px (a single capture past ~8,000 px repeats content)."
    if height <= CLIP:
        page.screenshot(path=str(path), full_page=True)
        return [path]
    out = []
    for k, y in enumerate(range(0, min(height, CLIP * MAX_CLIPS), CLIP)):
        p = path.with_name(f"{path.stem}-{k + 1}.png")
        page.screenshot(
            path=str(p), full_page=True, clip={"x": 0, "y": y, "width": WIDTH, "height": min(CLIP, height - y)}
        )
        out.append(p)
    return out


def page_problems(info) -> list[str]:
    "What a reader would see as broken on one page: images, stderr blocks, no sidebar, raw artefacts."
    bad = [f"image does not load: {i['src']}" for i in info["imgs"] if not i["ok"]]
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
        if target not in seen:
            bad.append(f"{link['where']} link to a missing page: {link['href']}")
        elif u.fragment and u.fragment not in seen[target] and unquote(u.fragment) not in seen[target]:
            bad.append(f"{link['where']} link to a missing anchor: {link['href']}")
    return bad, n_local, n_external


def visit(pages, chromium, to_shoot, shot_dir):
    "Open each page; its inspection and the errors the browser reported while loading it."
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
            report.append((path, info, list(errors)))
            if path in to_shoot:
                screenshot(page, shot_dir / f"{path.stem}.png", info["height"])
        browser.close()
    return report


def main(chromium: str, shots: bool) -> int:
    pages = sorted(p for p in DOCS.glob("*.html"))
    if not pages:
        sys.exit("docs-check: no pages in _docs/: run `make docs` first")
    if not Path(chromium).exists():
        sys.exit(f"docs-check: no browser at {chromium}: apt-get install -y chromium (Debian), or pass --chromium")
    shot_dir = DOCS / "shots"
    if shots:
        shot_dir.mkdir(exist_ok=True)
        for old in shot_dir.glob("*.png"):
            old.unlink()
    t0 = time.time()
    report = visit(pages, chromium, set(shot_pages()) if shots else set(), shot_dir)
    seen = {path.name: set(info["ids"]) for path, info, _ in report}
    problems, n_local, n_external = [], 0, 0
    for path, info, errors in report:
        links, n, e = link_problems(path, info, seen)
        n_local, n_external = n_local + n, n_external + e
        bad = errors + page_problems(info) + links
        status = "ok  " if not bad else "FAIL"
        print(
            f"{status} {path.name:24} {len(info['links']):4} links {len(info['imgs']):3} images {info['maths']:4} maths"
        )
        problems += [f"{path.name}: {b}" for b in bad]
    print(
        f"docs-check: {len(report)} pages, {n_local} local links checked ({n_external} external not followed), "
        f"{time.time() - t0:.1f}s in chromium"
    )
    if shots:
        names = ", ".join(sorted(p.name for p in shot_dir.glob("*.png")))
        print(f"docs-check: screenshots in {shot_dir.relative_to(ROOT)}/: {names}")
    for p in problems:
        print("  " + p)
    if problems:
        print(f"docs-check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the browser executable (Debian's chromium)")
    ap.add_argument("--no-shots", action="store_true", help="skip the screenshots")
    a = ap.parse_args()
    sys.exit(main(a.chromium, not a.no_shots))
