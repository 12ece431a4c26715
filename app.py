"""Bridge TD · Laws — the Streamlit front end of the knowledge base.

Thin on purpose: every answer comes from the `kb` library (search, law lookup, examples,
documents, build); this file only reads the query parameters, calls it and renders.

Pages (deep links):  ?q=...  search · ?law=45C4b  one law in every language ·
?examples=46  worked examples · ?page=library  documents and uploads.
"""

from __future__ import annotations

import html
import logging

import streamlit as st

from kb import lawref
from kb.library import BUILD_LOCK, MAX_UPLOAD_BYTES, ingest_upload
from kb.render import (
    KIND_LABELS,
    breadcrumbs_html,
    example_html,
    hit_card_html,
    law_chip,
    record_html,
)
from kb.store import KBError, default_corpus_dir, default_kb_dir

log = logging.getLogger("bridge-td-app")

st.set_page_config(page_title="Bridge TD · Laws", page_icon="♠", layout="wide", initial_sidebar_state="auto")

LANG_NAMES = {"it": "Italiano", "en": "English", "el": "Ελληνικά", "fr": "Français", "de": "Deutsch",
              "es": "Español", "nl": "Nederlands", "und": "not recognised"}
LANG_ORDER = ["it", "en", "el"]
KINDS = ["law_text", "example", "commentary"]
PLACEHOLDER = "declarer called the jack from dummy, then said oops, the king"
PAGE_CARDS = 40  # cards a law page column or the examples page shows before "Show all"
SEARCH_HELP = (
    "Describe the situation at the table in your own words, in any language — or type a law number.\n\n"
    "- *il morto ha giocato una carta non nominata dal giocante*\n"
    "- *declarer called the jack from dummy, then said oops, the king*\n"
    "- *ο αμυνόμενος έδειξε φύλλο*\n"
    "- *45C4b*, *art. 45 C 4 b*, *Νόμος 45Γ4β* open the law itself"
)
STAGES = {"model": "Embedding model", "load": "Reading documents", "embed": "Embedding passages",
          "index": "Writing the index"}
PAGES = [("search", "Search", "?"), ("law", "Law", "?page=law"), ("examples", "Examples", "?page=examples"),
         ("library", "Library", "?page=library")]

CSS = """
<style>
.block-container {padding-top: 3.8rem; padding-bottom: 3rem; max-width: 1400px;}
@media (max-width: 640px) {
  .block-container {padding-left: 0.8rem; padding-right: 0.8rem; padding-top: 3.6rem;}
  h1 {font-size: 1.75rem !important; padding-top: 0.4rem !important;}
}
[data-testid="stMarkdownContainer"] {overflow-wrap: anywhere; word-break: break-word;}
[data-testid="stMarkdownContainer"] a.law-chip:hover {background: rgba(31,95,168,0.18) !important;}
</style>
"""


def lang_label(code: str) -> str:
    return f"{code.upper()} · {LANG_NAMES.get(code, code)}"


def ordered_langs(langs) -> list[str]:
    langs = list(langs)
    return [x for x in LANG_ORDER if x in langs] + sorted(x for x in langs if x not in LANG_ORDER)


def md(fragment: str) -> None:
    """An HTML fragment from kb.render (escaped there, one line: no markdown inside)."""
    st.markdown(fragment, unsafe_allow_html=True)


# ------------------------------------------------------------------------------------------ the KB

@st.cache_resource(show_spinner=False)
def open_kb(kb_dir: str):
    from kb import KnowledgeBase

    kb = KnowledgeBase.open(kb_dir)
    try:
        kb.warm_up()  # load the model and the glossary now: the first search is then as fast as the others
    except Exception:  # noqa: BLE001 - search reports a model problem itself, with a sentence
        log.exception("embedding model not ready")
    return kb


def first_build(kb_dir, corpus, why: str) -> None:
    """Build the knowledge base with one progress bar per stage (model, documents, embedding, index)."""
    from kb.build import build

    holder = st.empty()
    with holder.container():
        st.info(f"Building the knowledge base from the documents in {corpus} — about a minute, once; later "
                f"starts open it at once. ({why})")
        bars = {stage: st.progress(0.0, text=f"{label} …") for stage, label in STAGES.items()}

    def progress(stage: str, done: int, total: int, detail: str) -> None:
        bar = bars.get(stage)
        if bar is None:
            return
        frac = min(1.0, done / total) if total else 1.0
        text = f"{STAGES[stage]}: {detail}" if detail else STAGES[stage]
        bar.progress(frac, text=text[:120])

    try:
        with BUILD_LOCK:
            try:
                open_kb(str(kb_dir))
                return  # another session built it while this one waited
            except KBError:
                pass
            result = build(corpus, kb_dir, progress=progress)
    finally:
        holder.empty()
    for r in result.reports:
        if r.status in ("failed", "skipped"):
            st.warning(f"{r.path}: {r.status} — {r.message}")
    if not result.passages:
        st.warning(f"No passages were found in {corpus}: add documents on the Library page.")


def get_kb():
    """The cached KnowledgeBase for KB_DIR; built from CORPUS_DIR first if there is none (or it is unusable)."""
    kb_dir = default_kb_dir()
    try:
        kb = open_kb(str(kb_dir))
    except KBError as e:
        first_build(kb_dir, default_corpus_dir(), str(e).split(";")[0])
        kb = open_kb(str(kb_dir))
    kb.refresh()  # an ingest from the command line or another session: pick up the new generation
    return kb


# ------------------------------------------------------------------------------------------ helpers

def doc_titles(kb) -> dict[str, str]:
    return {d["name"]: d.get("title") or d["name"] for d in kb.documents()}


def nav(active: str) -> None:
    links = []
    for key, label, href in PAGES:
        style = ("text-decoration:none;padding:0.2em 0.6em;border-radius:0.4em;white-space:nowrap;"
                 + ("font-weight:700;background:rgba(31,95,168,0.12)" if key == active else ""))
        aria = ' aria-current="page"' if key == active else ""
        links.append(f'<a href="{href}" target="_self" data-page="{key}"{aria} style="{style}">{label}</a>')
    md('<div class="app-nav" style="display:flex;flex-wrap:wrap;align-items:center;gap:0.3em 0.4em;'
       'margin-bottom:0.4em"><span style="font-weight:800;margin-right:0.5em;white-space:nowrap">'
       '♠<span style="color:#c00">♥</span> Bridge TD · Laws</span>' + "".join(links) + "</div>")


def qp_get(name: str, default: str = "") -> str:
    v = st.query_params.get(name)
    return v if v is not None else default


def qp_set(name: str, value: str | None) -> None:
    """Keep the URL in step with the page (deep links); empty values leave it."""
    if value:
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    elif name in st.query_params:
        del st.query_params[name]


def first_of(items: list, key: str) -> list:
    """The first PAGE_CARDS of a long list (a law page or a law's examples in a federation's archive runs to
    hundreds of cards, each sent to the browser), with a button that shows them all."""
    n = st.session_state.get("page_cards", PAGE_CARDS)
    if len(items) <= n or st.session_state.get(f"all_{key}"):
        return items
    st.button(f"Show all {len(items)}", key=f"btn_{key}", on_click=lambda: st.session_state.update({f"all_{key}": True}))
    return items[:n]


def init_state(key: str, value) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


# ------------------------------------------------------------------------------------------ search

def search_filters(kb) -> dict:
    stats = kb.stats()
    langs = ordered_langs(stats.by_lang)
    docs = [d["name"] for d in kb.documents()]
    titles = doc_titles(kb)
    sb = st.sidebar
    sb.header("Filters")
    init_state("f_lang", [x for x in qp_get("lang").split(",") if x in langs])
    init_state("f_kind", [x for x in qp_get("kind").split(",") if x in KINDS])
    init_state("f_doc", qp_get("doc") if qp_get("doc") in docs else "")
    init_state("f_under", qp_get("under"))
    sb.multiselect("Language", langs, key="f_lang", format_func=lang_label,
                   help="Only passages in these languages (none chosen: all).")
    sb.multiselect("Kind", KINDS, key="f_kind", format_func=lambda k: KIND_LABELS.get(k, k),
                   help="Law text, worked examples, or commentary (none chosen: all).")
    sb.selectbox("Document", ["", *docs], key="f_doc",
                 format_func=lambda n: "all documents" if not n else titles.get(n, n))
    sb.text_input("Law (and its sub-paragraphs)", key="f_under", placeholder="e.g. 45C or 46",
                  help="Only passages about this law or a paragraph under it.")
    under = st.session_state.f_under.strip()
    under_c = lawref.canonical(under) if under else None
    if under and under_c is None:
        sb.warning(f"'{under}' is not a law address (try 45C, 46B2, art. 47): the law filter is ignored.")
    qp_set("lang", ",".join(st.session_state.f_lang))
    qp_set("kind", ",".join(st.session_state.f_kind))
    qp_set("doc", st.session_state.f_doc)
    qp_set("under", under)
    return {"lang": st.session_state.f_lang or None, "kind": st.session_state.f_kind or None,
            "doc": st.session_state.f_doc or None, "law": under_c}


def page_search(kb) -> None:
    st.title("What happened at the table?")
    filters = search_filters(kb)
    q = st.text_input("Describe the situation, or type a law number", key="q",
                      placeholder=f"e.g. {PLACEHOLDER}", help=SEARCH_HELP)
    qp_set("q", q.strip())
    if not q.strip():
        st.caption("Examples: *il morto ha giocato una carta non nominata* · "
                   "*declarer called the jack from dummy, then said oops, the king* · "
                   "*ο αμυνόμενος έδειξε φύλλο* · *45C4b* · *Νόμος 46Β2*")
        return
    res = kb.search(q, k=12, **filters)
    info = f"Query language: **{lang_label(res.lang) if res.lang != 'und' else 'not recognised'}**"
    if res.refs:
        info += " · laws named: " + ", ".join(res.refs)
    st.caption(info)
    if res.record or res.framing:
        md(record_html(res.record, res.framing))
    for n in res.notices:
        st.info(n)
    if not res.hits:
        st.write("No passage matches this description with the current filters. Try other words, another "
                 "language, or fewer filters.")
        return
    titles = doc_titles(kb)
    for h in res.hits:
        md(hit_card_html(h, doc_title=titles.get(h.doc)))


# ------------------------------------------------------------------------------------------ law

def law_picker(kb, value: str = "") -> None:
    ref = st.text_input("Law address", value=value, key="law_input", placeholder="45C4b · art. 45 C 4 b · "
                        "Νόμος 45Γ4β")
    if ref.strip() and ref.strip() != value:
        canon = lawref.canonical(ref) or (lawref.parse_refs(ref)[:1] or [None])[0]
        if canon is None:
            st.warning(f"'{ref}' is not a law address (try 45C4b, art. 45 C 4 b, Νόμος 45Γ4β).")
        else:
            st.query_params.clear()
            st.query_params["law"] = canon
            st.rerun()


def law_numbers_html(kb) -> str:
    return "".join(law_chip(n, label=f"Law {n}") for n in kb.law_tree())


def page_law(kb, ref: str, others: list[str] | None = None) -> None:
    if not ref.strip():
        st.title("Law")
        law_picker(kb)
        st.caption("Laws in the knowledge base:")
        md(f'<div class="law-index">{law_numbers_html(kb)}</div>')
        return
    view = kb.law(ref)
    if not view.exists:
        st.title(f"Law {ref}")
        st.error(f"no such law in the knowledge base: {view.ref or ref}")
        if view.message and not view.message.startswith("no such law"):
            st.caption(view.message)
        st.caption("Laws in the knowledge base:")
        md(f'<div class="law-index">{law_numbers_html(kb)}</div>')
        return
    qp_set("law", view.ref)
    st.title(f"Law {view.ref}")
    names = " · ".join(lawref.render(view.ref, lg) for lg in ("en", "it", "el"))
    md(f'<div class="law-title" style="font-size:1.1em;font-weight:600">{html.escape(view.title)}</div>'
       if view.title else "")
    st.caption(names)
    md(breadcrumbs_html(view.ancestors, view.ref))
    if others:
        md('<div style="margin-top:0.3em">Also asked: ' + "".join(law_chip(o) for o in others) + "</div>")
    if view.children:
        md('<div class="law-children" style="margin-top:0.4em"><span style="opacity:0.8;margin-right:0.4em">'
           'Paragraphs:</span>' + "".join(law_chip(c) for c in view.children) + "</div>")
    titles = doc_titles(kb)
    langs = ordered_langs(view.by_lang)
    if langs:
        cols = st.columns(len(langs))
        for col, lg in zip(cols, langs, strict=True):
            with col:
                hits = view.by_lang[lg]
                md(f'<div class="lang-col-head" data-lang="{lg}" style="font-size:1.3em;font-weight:700;'
                   f'margin:0.6em 0 0.4em 0">{html.escape(lang_label(lg))} '
                   f'<span style="font-size:0.6em;font-weight:400;opacity:0.7">{len(hits)} passage{"s" if len(hits) != 1 else ""}'
                   f'</span></div>')
                for h in first_of(hits, f"law_{view.ref}_{lg}"):
                    md(hit_card_html(h, full_text=True, doc_title=titles.get(h.doc)))
    else:
        st.write("No passage of the law text or commentary is tagged with this exact address; see the worked "
                 "examples and related passages below.")
    if view.examples:
        st.subheader(f"Worked examples ({len(view.examples)})", anchor=False)
        for h in first_of(view.examples, f"lawex_{view.ref}"):
            label = f"{h.lang.upper()} · {h.title} — {', '.join(h.laws)}"
            with st.expander(label):
                md(example_html(h, doc_title=titles.get(h.doc)))
    if view.cites:
        st.subheader("Laws it cites", anchor=False)
        md("".join(law_chip(c) for c in view.cites))
    if view.cited_by:
        st.subheader(f"Passages that cite it ({len(view.cited_by)})", anchor=False)
        with st.expander("show them"):
            for h in first_of(view.cited_by, f"citedby_{view.ref}"):
                md(hit_card_html(h, doc_title=titles.get(h.doc)))
    if view.inferred:
        st.subheader(f"Passages probably about it ({len(view.inferred)})", anchor=False)
        with st.expander("show them (tags inferred from their words or similar passages)"):
            for h in first_of(view.inferred, f"inferred_{view.ref}"):
                md(hit_card_html(h, doc_title=titles.get(h.doc)))
    if view.related:
        st.subheader("Related laws", anchor=False)
        md("".join(law_chip(r, label=f"{r} ×{n}") for r, n in view.related))


# ------------------------------------------------------------------------------------------ examples

def page_examples(kb, ref: str) -> None:
    st.title("Worked examples")
    tree = kb.law_tree()
    counts = kb.example_counts()
    if not counts:
        st.write("No worked examples in the knowledge base yet: add lessons with examples in the Library.")
        return

    def count(addr: str) -> int:
        return counts.get(addr, 0)

    numbers = [n for n in tree if count(n)] or list(tree)
    canon = lawref.canonical(ref) if ref else None
    start = str(lawref.parts(canon)[0]) if canon else numbers[0]
    if start not in tree:
        st.warning(f"no such law in the knowledge base: {canon or ref}")
        start, canon = numbers[0], None
    init_state("ex_law", start if start in numbers else numbers[0])
    if st.session_state.ex_law not in numbers:
        st.session_state.ex_law = numbers[0]
    left, right = st.columns(2)
    with left:
        law = st.selectbox("Law", numbers, key="ex_law", format_func=lambda n: f"Law {n} — {count(n)} examples")
    subs = [a for a in tree.get(law, [law]) if a == law or count(a)]
    if "ex_sub" not in st.session_state or st.session_state.ex_sub not in subs:
        st.session_state.ex_sub = canon if canon in subs else law
    with right:
        sub = st.selectbox("Paragraph", subs, key="ex_sub",
                           format_func=lambda a: (f"all of Law {a}" if a == law else
                                                  f"{'  ' * (lawref.depth(a) - 1)}{a} — {count(a)}"))
    qp_set("examples", sub)
    md('<div style="display:flex;flex-wrap:wrap;gap:0.4em"><span style="opacity:0.7">Law page:</span>'
       f'{breadcrumbs_html(lawref.ancestors(sub), sub)}</div>')
    exs = kb.examples(sub)
    st.caption(f"{len(exs)} worked example(s) under {sub}, in document order. The deal is drawn with North "
               "on top; the dealer is underlined in the compass, vulnerable seats are red.")
    titles = doc_titles(kb)
    for h in first_of(exs, f"examples_{sub}"):
        md(example_html(h, doc_title=titles.get(h.doc)))


# ------------------------------------------------------------------------------------------ library

def page_library(kb) -> None:
    st.title("Library")
    docs = kb.documents()
    st.caption(f"{len(docs)} documents · {kb.stats().passages} passages · knowledge base in {kb.kb_dir}")
    rows = [{"title": d.get("title") or d["name"], "year": str(d.get("year") or "—"),
             "languages": ", ".join(x.upper() for x in d.get("languages") or []),
             "laws edition": str(d.get("laws_edition") or "—"), "pages": d.get("pages"),
             "passages": d.get("passages"), "file": d["name"]} for d in docs]
    st.dataframe(rows, hide_index=True, width="stretch")
    st.subheader("Add documents", anchor=False)
    st.caption(f"PDF, .txt or .md, up to {MAX_UPLOAD_BYTES // (1 << 20)} MB each. The knowledge base is "
               "updated incrementally: what is already indexed stays as it is; a file that cannot be read "
               "is not added.")
    for result in st.session_state.pop("upload_results", []):  # from the run that did the upload
        show_upload_result(result)
    with st.form("upload", clear_on_submit=True):
        files = st.file_uploader("Documents", type=["pdf", "txt", "md"], accept_multiple_files=True)
        submitted = st.form_submit_button("Add to the knowledge base")
    if submitted and files:
        st.session_state["upload_results"] = handle_uploads(kb, [(f.name, f.getvalue()) for f in files])
        st.rerun()  # show the table with the new documents, then the results above the form
    elif submitted:
        st.warning("Choose one or more files first.")


def handle_uploads(kb, files: list[tuple[str, bytes]]) -> list:
    """Save each file and rebuild incrementally, with progress bars; returns an UploadResult per file."""
    corpus, kb_dir = default_corpus_dir(), kb.kb_dir
    results = []
    for name, data in files:
        holder = st.empty()
        with holder.container():
            st.info(f"Adding {name} …")
            bars = {stage: st.progress(0.0, text=f"{label} …") for stage, label in STAGES.items()}

        def progress(stage: str, done: int, total: int, detail: str, bars=bars) -> None:
            bar = bars.get(stage)
            if bar is not None:
                bar.progress(min(1.0, done / total) if total else 1.0, text=f"{STAGES[stage]}: {detail}"[:120])

        try:
            results.append(ingest_upload(kb_dir, corpus, name, data, progress=progress))
        finally:
            holder.empty()
    kb.refresh()
    return results


def show_upload_result(result) -> None:
    if not result.ok:
        st.error(result.message)
    elif result.status == "ok":
        st.success(result.message)
    else:
        st.info(result.message)
    if result.reports:
        with st.expander("every file in the library"):
            for r in result.reports:
                extra = f" — {r.message}" if r.message else ""
                st.markdown(f"- `{r.status}` {html.escape(r.path)}: {r.pages} page(s), {r.passages} passages"
                            f"{html.escape(extra)}")


# ------------------------------------------------------------------------------------------ router

def route() -> tuple[str, str]:
    qp = st.query_params
    if "law" in qp:
        return "law", qp_get("law")
    if "examples" in qp:
        return "examples", qp_get("examples")
    page = qp_get("page", "search")
    if page in ("law", "examples", "library"):
        return page, ""
    return "search", qp_get("q")


def main() -> None:
    md(CSS)
    page, arg = route()
    # a query that is only a law address ("46B2", "art. 45 C 4 b", "Νόμος 45ΣΤ") opens that law
    others: list[str] = []
    if page == "search":
        init_state("q", arg)
        q = st.session_state.get("q") or ""
        refs = lawref.address_query(q) if q.strip() else None
        if refs:
            st.query_params.clear()
            st.query_params["law"] = refs[0]
            page, arg, others = "law", refs[0], refs[1:]
            del st.session_state["q"]
    nav(page)
    try:
        kb = get_kb()
    except Exception as e:  # noqa: BLE001
        log.exception("knowledge base unavailable")
        st.error(f"The knowledge base could not be opened: {e}. Build it with `python -m ingest` "
                 "and reload this page.")
        return
    try:
        render_page(kb, page, arg, others)
    finally:
        # a marker after everything else: browser tests wait for it to know the page is complete
        md(f'<span class="page-end" data-page="{page}"></span>')


def render_page(kb, page: str, arg: str, others: list[str]) -> None:
    try:
        if page == "law":
            page_law(kb, arg, others)
        elif page == "examples":
            page_examples(kb, arg)
        elif page == "library":
            page_library(kb)
        else:
            page_search(kb)
    except Exception as e:  # noqa: BLE001 - never a traceback in the page (st.rerun/st.stop are BaseException)
        log.exception("page failed")
        st.error(f"Something went wrong while showing this page ({type(e).__name__}: {e}). "
                 "Try again, or another query.")


main()
