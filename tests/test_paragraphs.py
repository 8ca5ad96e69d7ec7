"""Plain text read by paragraph (`hf_seq2seq.formats.paragraphs`): the lines of a hard-wrapped paragraph are
joined into one text and written back on one line, in a `.txt` document and in `hf-seq2seq translate
--input-file`/stdin, on real wrapped files written by others (tests/fixtures/wrapped/: an RFC, a Project Gutenberg
book, a mailing-list reply); quote markers, indentation, headings, code, verse, blank lines and line endings are
kept; files that are not hard-wrapped keep their lines, and `--line-by-line` keeps every file's.

`helpers.WordTranslator` with no lexicon copies each word, so what a translation holds is what was read and the
sentences it was given show whether a sentence broken over lines came whole; the end-to-end tests run the command
on the memorising model."""

import io
import re

import pytest
from helpers import FIXTURES, WordTranslator

from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.data.segmentation import split_sentences
from hf_seq2seq.formats.documents import translate_document_bytes
from hf_seq2seq.formats.paragraphs import paragraphs

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

WRAPPED = FIXTURES / "wrapped"
RFC = WRAPPED / "rfc2324.txt"
BOOK = WRAPPED / "gutenberg-11-alice-chapter-2-excerpt.txt"
MAIL = WRAPPED / "riak-users-reply.txt"


def read(path) -> str:
    return path.read_bytes().decode("utf-8")


def written(text: str, line_by_line: bool = False) -> list[str]:
    """The lines `text` is written back as, its texts untranslated."""
    layout = paragraphs(text, line_by_line)
    return layout.lines(layout.texts)


def words_of(text: str) -> list[str]:
    """The text's words, without quoted-mail markers, a word broken at a hyphen over a line end counted whole
    (`web-` `connected`)."""
    return re.sub(r"(?<=\w-)\s+", "", re.sub(r"(?m)^(?:[ \t]*>)+", "", text)).split()


@pytest.fixture
def copier():
    return WordTranslator({})


def test_an_rfc_is_read_paragraph_by_paragraph_with_its_title_block_headings_and_grammar_kept():
    text = read(RFC)
    texts = written(text)
    assert texts[:3] == [
        "Network Working Group                                       L. Masinter",
        "Request for Comments: 2324                                 1 April 1998",
        "Category: Informational",
    ]  # a title block in columns: each line as written
    assert (
        "   There is coffee all over the world. Increasingly, in a world in which computing is ubiquitous, the "
        "computists want to make coffee. Coffee brewing is an art, but the distributed intelligence of the "
        "web-connected world transcends art.  Thus, there is a strong, dark, rich requirement for a protocol "
        "designed espressoly for the brewing of coffee. Coffee is brewed using coffee pots.  Networked coffee "
        "pots require a control protocol if they are to be controlled."
    ) in texts  # seven lines, indentation kept; `web-`/`connected`: both words elsewhere in the RFC
    # `Request-`/`URI` is written whole elsewhere; `HTCPCP-`/`specific` is shown by nothing: hyphen and space
    assert any('identified by the Request-URI." If the Request-URI refers' in t for t in texts)
    assert any("in order to accommodate HTCPCP- specific methods, headers" in t for t in texts)
    for kept in (
        "2.1.2 GET method",
        '          Safe                = "Safe" ":" safe-nature',
        '          safe-nature         = "yes" | "no" | conditionally-safe',
        "                          | milk-type",
        "   Larry Masinter",
        "   Xerox Palo Alto Research Center",
    ):
        assert kept in texts  # headings, grammar rules, an address: lines of their own
    disclaimer = [t for t in texts if "THE INTERNET SOCIETY AND THE INTERNET ENGINEERING TASK FORCE" in t]
    assert len(disclaimer) == 1 and disclaimer[0].endswith("FITNESS FOR A PARTICULAR PURPOSE.")
    assert len(texts) < len(text.splitlines()) * 0.7
    assert words_of(" ".join(texts)) == words_of(text)  # no word lost, added or moved


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_a_book_translates_a_paragraph_to_a_line_with_its_heading_verse_and_line_endings_kept(
    copier, newline
):
    source = read(BOOK).replace("\n", newline)
    out = translate_document_bytes(copier, source.encode(), ".txt").decode("utf-8")
    lines = out.split(newline)
    assert "\n" not in out.replace(newline, "") and "\r" not in out.replace(newline, "")
    assert lines[:4] == ["CHAPTER II.", "The Pool of Tears", "", ""]
    assert lines[4].startswith(
        "“Curiouser and curiouser!” cried Alice (she was so much surprised, that for the"
    )
    assert lines[4].endswith("Let me see: I’ll give them a new pair of boots every Christmas.”")
    assert lines[5] == ""
    assert "     _Alice’s Right Foot, Esq., Hearthrug, near the Fender,_ (_with Alice’s love_)." in lines
    assert lines[-10:] == [
        "“How doth the little crocodile",
        "    Improve his shining tail,",
        "And pour the waters of the Nile",
        "    On every golden scale!",
        "",
        "“How cheerfully he seems to grin,",
        "    How neatly spread his claws,",
        "And welcome little fishes in",
        "    With gently smiling jaws!”",
        "",
    ]  # verse keeps its lines; the file's last line end too
    sentences = [s for call in copier.calls for s in call]
    # the second line of the first paragraph begins mid-sentence: no sentence was cut there
    assert not any(s.startswith("for the moment") for s in sentences)
    assert any("I’m opening out like the largest telescope" in s for s in sentences)
    assert words_of(out) == words_of(source)


def test_line_by_line_translates_each_line_of_a_text_file_as_before(copier):
    source = read(BOOK)
    out = translate_document_bytes(copier, source.encode(), ".txt", line_by_line=True).decode("utf-8")
    assert out == source
    assert any(s.startswith("for the moment") for call in copier.calls for s in call)


def test_a_mailing_list_reply_keeps_its_quote_levels_code_signature_and_footer(copier):
    source = read(MAIL)
    out = translate_document_bytes(copier, source.encode(), ".txt").decode("utf-8")
    lines = out.split("\n")
    assert (
        "> You can list the keys for the bucket and call delete for each. Or if you put the keys (and kept track "
        "of them in your test) you can delete them one at a time (without incurring the cost of calling list "
        "first.)"
    ) in lines
    assert (
        ">> What is the best way to clear a Riak bucket of all key, values after running a test?\n"
        ">> I am currently using the Java HTTP API.\n"
        "> You can list"
    ) in out  # a short line ends its paragraph; a quote level changes one
    assert (
        '> "At the moment there is no straightforward way to delete an entire Bucket. There is, however, an open '
        "ticket for the feature. To delete all the keys in a bucket, you’ll need to delete them all "
        'individually."'
    ) in lines
    for kept in (
        "Oh thanks.",
        "-Abhishek Kona",
        "On 01/03/11 7:07 PM, Russell Brown wrote:",
        "> Hi,",
        "> On Tue, 2011-03-01 at 18:02 +0530, Abhishek Kona wrote:",
        '>          String bucket = "my_bucket";',
        ">          BucketResponse bucketResponse = riakClient.listBucket(bucket);",
        ">          RiakBucketInfo bucketInfo = bucketResponse.getBucketInfo();",
        ">          for(String key : bucketInfo.getKeys()) {",
        ">              riakClient.delete(bucket, key);",
        ">          }",
        ">> riak-users mailing list",
        "riak-users@lists.basho.com",
        "http://lists.basho.com/mailman/listinfo/riak-users_lists.basho.com",
    ):
        assert kept in lines
    assert len(lines) == len(source.split("\n")) - 5  # eight lines written as the three paragraphs above
    assert words_of(out) == words_of(source)


def one_sentence_a_line() -> str:
    """The book's prose cut into sentences, one a line (as a parallel corpus is written): long lines, each
    ending a sentence."""
    prose = [p for p in paragraphs(read(BOOK)).texts if len(p) > 200]
    return "".join(s + "\n" for p in prose for s in split_sentences(p).sentences)


def subtitle_lines() -> str:
    """The cue text of a real subtitle file, its lines one after the other: short lines that break sentences."""
    cues = (FIXTURES / "subtitles" / "netflix_chicas_del_cable.vtt").read_text(encoding="utf-8")
    return "".join(
        line + "\n" for line in cues.splitlines() if line.strip() and "-->" not in line and line != "WEBVTT"
    )


@pytest.mark.parametrize(
    "source",
    [one_sentence_a_line, subtitle_lines, lambda: read(BOOK).split("\n\n")[-2] + "\n"],
    ids=["one-sentence-a-line", "subtitles", "verse"],
)
def test_a_file_that_is_not_hard_wrapped_keeps_its_lines(source):
    text = source()
    assert text.count("\n") > 3
    assert written(text) == text.removesuffix("\n").split("\n")


def test_a_word_broken_at_a_hyphen_is_joined_as_the_text_writes_it_elsewhere():
    text = (
        "A computer reads the file; the pre-processing of this text runs on a small compu-\n"
        "ter, while pre- and post-processing are done by the same tool without a break.\n"
    )
    assert paragraphs(text).texts == [
        "A computer reads the file; the pre-processing of this text runs on a small computer, while pre- and "
        "post-processing are done by the same tool without a break."
    ]


def test_a_blank_text_and_a_last_line_without_its_end_are_read_as_written():
    assert paragraphs("").texts == [] and paragraphs("\n").texts == [""]
    layout = paragraphs("Hello.\r\n\r\nBye.")
    assert (layout.texts, layout.ends) == (["Hello.", "", "Bye."], ["\r\n", "\r\n", ""])
    assert layout.join(["Bonjour.", "", "Au revoir."]) == "Bonjour.\r\n\r\nAu revoir."


# ---- the command


def run_command(monkeypatch, engine, argv, stdin=None):
    """`hf-seq2seq translate ARGV` with `engine` in place of the model (a folder that records no pair: the
    texts' language given)."""
    monkeypatch.setattr("hf_seq2seq.engines.factory.load_translator", lambda *args, **kwargs: engine)
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return translate_cli.main([*argv, "--source-lang", "en"])


@pytest.mark.parametrize("where", ["input-file", "stdin"])
def test_the_command_prints_a_wrapped_file_paragraph_by_paragraph(
    tmp_path, monkeypatch, capsys, copier, where
):
    argv = [str(tmp_path), "--input-file", str(MAIL)] if where == "input-file" else [str(tmp_path)]
    printed = run_command(monkeypatch, copier, argv, stdin=read(MAIL) if where == "stdin" else None)
    assert printed == written(read(MAIL))  # the copier gives back what it was given, one a line
    assert len(printed) == len(read(MAIL).splitlines()) - 5
    assert printed[7:9] == ["> Hi,", "> On Tue, 2011-03-01 at 18:02 +0530, Abhishek Kona wrote:"]
    assert capsys.readouterr().out == "\n".join(printed) + "\n"


def test_the_command_prints_quote_markers_untranslated_and_counts_them_in_alignments(tmp_path, monkeypatch):
    printed = run_command(
        monkeypatch,
        WordTranslator({"the": "le", "dog": "chien"}),
        [str(tmp_path), "--alignments"],
        stdin="> The dog\n>\nThe dog\n",
    )
    assert printed == ["> Le chien\t1-1 2-2", ">\t", "Le chien\t0-0 1-1"]  # words of the lines as printed


def test_the_command_reads_each_line_as_a_text_with_line_by_line(tmp_path, monkeypatch, copier):
    printed = run_command(monkeypatch, copier, [str(tmp_path), "--input-file", str(MAIL), "--line-by-line"])
    assert len(printed) == len(read(MAIL).splitlines())
    output = tmp_path / "out.txt"
    argv = [str(tmp_path), "--input-file", str(BOOK), "--output-file", str(output), "--line-by-line"]
    run_command(monkeypatch, copier, argv)
    assert output.read_text(encoding="utf-8") == read(BOOK)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--line-by-line", "How are you?"], "--line-by-line is for plain text from --input-file or stdin"),
        (
            ["--line-by-line", "--format", "html"],
            "--line-by-line is for plain text from --input-file or stdin",
        ),
        (
            ["--line-by-line", "--input-file", "{dir}/a.srt", "--output-file", "{dir}/b.srt"],
            "--line-by-line is for plain text: a document other than .txt",
        ),
    ],
    ids=["arguments", "html", "srt"],
)
def test_line_by_line_is_refused_where_there_are_no_lines_to_keep(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit):
        translate_cli.main([str(tmp_path), *(flag.replace("{dir}", str(tmp_path)) for flag in flags)])
    assert message in capsys.readouterr().err


# the memorising model's sentences, a paragraph wrapped at 55 columns: "the cat is" / "here ." cut a sentence
WRAPPED_PARAGRAPH = "i like cheese . the big dog sat on the mat . the cat is\nhere . how are you ?\n"
TRANSLATED = "je aime le fromage . le grand chien est sur le tapis . le chat est ici . comment allez vous ?"


def test_the_command_translates_a_wrapped_text_file_by_paragraph_end_to_end(memorising_folder, tmp_path):
    source, output = tmp_path / "note.txt", tmp_path / "note.fr.txt"
    source.write_bytes(
        ("\ufeff" + WRAPPED_PARAGRAPH + "\n" + WRAPPED_PARAGRAPH).replace("\n", "\r\n").encode()
    )
    translate_cli.main([str(memorising_folder), "--input-file", str(source), "--output-file", str(output)])
    assert output.read_bytes().decode() == f"\ufeff{TRANSLATED}\r\n\r\n{TRANSLATED}\r\n"
    printed = translate_cli.main([str(memorising_folder), "--input-file", str(source)])
    assert printed == [TRANSLATED, "", TRANSLATED]
    by_line = translate_cli.main([str(memorising_folder), "--input-file", str(source), "--line-by-line"])
    assert len(by_line) == 5 and by_line[1].endswith("comment allez vous ?")
