"""Word alignments, glossaries and HTML: what a user of `hf_seq2seq.formats` relies on. Most tests use
`helpers.WordTranslator` (a fake engine whose alignments are known), so that they check the placing of terms and
tags, not a model's attention; the torch engine's own alignments are checked on the memorising model."""

import io

import pytest
from counters import HtmlReader
from helpers import MEMORISED_PAIRS, WordTranslator
from measure_markup import SHAPES, fragments, markup_problems

from hf_seq2seq.engines.alignment import (
    AlignmentRule,
    alignment_error_rate,
    attention_alignment,
    parse_pharaoh,
    pharaoh,
    token_words,
)
from hf_seq2seq.engines.base import UnsupportedFeature, translate
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.glossary import Glossary, GlossaryError, apply_terms
from hf_seq2seq.formats.markup import read_pieces, translate_html
from hf_seq2seq.formats.spans import Span, project_spans
from hf_seq2seq.models.transformer_mt.protected_spans import ProtectedSplit, protected_spans

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

LEXICON = {
    "the": "le", "a": "un", "cat": "chat", "dog": "chien", "sees": "voit", "red": "rouge", "big": "grand",
    "hello": "bonjour", "world": "monde", "invoice": "note", "invoices": "notes", "pay": "payez", "your": "votre",
    "house": "maison", "is": "est", "small": "petit", "and": "et", "cheap": "bon marché", "pull": "tirez",
    "request": "demande", "please": "svp",
}  # fmt: skip


@pytest.fixture
def words():
    return WordTranslator(LEXICON, adjectives=frozenset({"red", "big", "cheap", "small"}))


# ---- alignments


def test_token_words_maps_subword_tokens_to_whitespace_words():
    text = "Hello  wonderful world."
    offsets = [
        (0, 5),
        (5, 7),
        (7, 11),
        (11, 16),
        (16, 22),
        (22, 23),
        (0, 0),
    ]  # " wo" from the space, then </s>
    assert token_words(offsets, text) == [0, 1, 1, 1, 2, 2, None]


def test_attention_alignment_reads_the_shifted_row_and_skips_end_of_sentence():
    # rows: [start, t0, t1] inputs; columns: source tokens w0, w1, </s>
    attention = [
        [0.1, 0.8, 0.1],  # input = start: predicts t0
        [0.7, 0.1, 0.2],  # input = t0
        [0.0, 0.1, 0.9],  # input = t1: attends to </s>, which is never aligned
    ]
    source, target = [0, 1, None], [0, 1]
    assert attention_alignment(attention, source, target, AlignmentRule(shift=0, both_ways=False)) == [
        (0, 1),
        (1, 0),
    ]
    assert attention_alignment(attention, source, target, AlignmentRule(shift=1, both_ways=False)) == [
        (0, 0),
        (1, 1),
    ]
    both = AlignmentRule(shift=0, both_ways=True)  # source token 0 is attended most by row 1: target token 1
    assert attention_alignment(attention, source, target, both) == [(0, 1), (1, 0)]
    with pytest.raises(ValueError, match="shift"):
        AlignmentRule(shift=2)


def test_pharaoh_round_trip_and_alignment_error_rate():
    assert pharaoh([(0, 0), (1, 2)]) == "0-0 1-2"
    assert parse_pharaoh("1-2 0-0 0p1") == [(0, 0), (0, 1), (1, 2)]
    assert alignment_error_rate([[(0, 0), (1, 1)]], [[(0, 0), (1, 1)]]) == 0
    assert alignment_error_rate([[(0, 0), (1, 2)]], [[(0, 0), (1, 1)]]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="Pharaoh"):
        parse_pharaoh("0:1")


def test_torch_engine_aligns_every_target_word_to_one_source_word(memorising_folder):
    from hf_seq2seq.engines.factory import load_translator

    translator = load_translator(memorising_folder)
    sources = [source for source, _ in MEMORISED_PAIRS]
    targets = translator.translate_sentences(sources)
    for layer in (0, -1, None):
        for shift in (0, 1):
            alignments = translator.align(sources, targets, rule=AlignmentRule(layer, shift))
            for source, target, pairs in zip(sources, targets, alignments, strict=True):
                assert sorted({j for _, j in pairs}) == list(range(len(target.split())))
                assert all(0 <= i < len(source.split()) for i, _ in pairs)
    batched = translator.align(sources, targets, batch_size=64)
    assert [
        translator.align([s], [t])[0] for s, t in zip(sources, targets, strict=True)
    ] == batched  # padding


def test_translate_aligned_counts_words_across_sentences(words):
    [result] = translate_aligned(words, ["The red cat sees a dog.  Hello world!"])
    assert result.target == "Le chat rouge voit un chien.  Bonjour monde!"
    assert result.alignment == [(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)]


def test_sentences_that_begin_inside_a_word_keep_every_aligned_index_within_the_text(words):
    """Chinese and Japanese put no space between sentences: the splitter cuts the text's last whitespace word in
    two sentences, whose words are that one word of the text (Apache POI's stress009.docx crashed on this)."""
    [result] = translate_aligned(words, ["The cat 今天下雨了。明天会晴天。"])
    assert result.target == "Le chat 今天下雨了。明天会晴天。"
    assert result.alignment == [(0, 0), (1, 1), (2, 2)]


def test_engines_without_attention_refuse_alignments(words):
    class NoAttention(WordTranslator):
        align = WordTranslator.__mro__[1].align  # the base class's: no alignments

    engine = NoAttention(LEXICON)
    with pytest.raises(UnsupportedFeature, match="torch engine"):
        translate_aligned(engine, ["The cat."])
    with pytest.raises(UnsupportedFeature):
        translate_html(engine, ["<p>The <b>cat</b>.</p>"])
    assert (
        translate_aligned(engine, ["The cat."], alignments=False)[0].target == "Le chat."
    )  # no glossary: fine


# ---- glossaries


def test_glossary_terms_match_whatever_the_case_and_inflection():
    glossary = Glossary({"invoice": "facture", "pull request": "pull request", "company": "société"})
    found = glossary.find_terms("Invoices, INVOICE's and the invoice. A pull request; companies.")
    assert [(m.start, m.end, m.target) for m in found] == [
        (0, 1, "facture"), (1, 2, "facture"), (4, 5, "facture"), (6, 8, "pull request"), (8, 9, "société"),
    ]  # fmt: skip
    assert glossary.find_terms("The invoiced amount is invoicing.")  # inflected verbs too
    assert not glossary.find_terms("Voice, in voice.")


def test_glossary_replaces_the_aligned_words_and_keeps_what_surrounds_them(words):
    glossary = Glossary({"invoice": "facture", "big": "énorme"})
    [result] = translate_aligned(words, ["Pay your invoice. The big dog."], glossary=glossary)
    assert result.target == "Payez votre facture. Le chien énorme."
    [result] = translate_aligned(words, ["Invoice please"], glossary=Glossary({"invoice": "facture"}))
    assert result.target == "Facture svp"  # the capital of the sentence's first word kept


def test_glossary_terms_of_several_words_and_insertion_where_nothing_is_aligned():
    translation, alignment = apply_terms(
        "le chat", [(0, 0), (2, 1)], Glossary({"big": "gros"}).find_terms("the big cat")
    )
    assert translation == "le gros chat"  # inserted after the word aligned to the source word before it
    assert alignment == [(0, 0), (1, 1), (2, 2)]
    translation, _ = apply_terms(
        "vérifiez l'addition .",
        [(0, 0), (1, 1), (2, 2)],
        Glossary({"bill": "note"}).find_terms("check bill ."),
    )
    assert (
        translation == "vérifiez le note ."
    )  # the elided article written out (as "le": a glossary does not know the term's gender)
    translation, _ = apply_terms(
        "voici la facture", [(0, 0), (1, 2)], Glossary({"invoice": "facture"}).find_terms("here invoice")
    )
    assert translation == "voici la facture"  # already there: left alone
    found = Glossary({"cat": "matou"}).find_terms("the cat is here")
    translation, _ = apply_terms("le chat est ici .", [(0, 0), (1, 4), (2, 2), (3, 3)], found)
    assert translation == "le matou chat est ici ."  # a full stop alone is never replaced: the term goes in


def test_a_glossary_term_with_its_article_fixes_the_models_article():
    glossary = Glossary({"invoice": "la facture"})
    alignment = [(0, 0), (1, 1), (2, 2), (3, 3)]
    found = glossary.find_terms("The invoice is here .")
    assert apply_terms("Le note est ici .", alignment, found)[0] == "La facture est ici ."
    found = glossary.find_terms("Pay your invoice .")
    assert apply_terms("Payez votre note .", alignment, found)[0] == "Payez votre facture ."
    found = glossary.find_terms("Check invoice .")
    assert apply_terms("Vérifiez l'addition .", alignment[:3], found)[0] == "Vérifiez la facture ."


def test_glossary_files_and_their_errors(tmp_path):
    tsv = tmp_path / "terms.tsv"
    tsv.write_text("# terms\ninvoice\tfacture\n\npull request\tpull request\n", encoding="utf-8")
    assert len(Glossary.load(tsv)) == 2
    json_file = tmp_path / "terms.json"
    json_file.write_text('{"invoice": "facture"}', encoding="utf-8")
    assert Glossary.load(json_file).find_terms("an invoice")[0].target == "facture"
    tsv.write_text("invoice facture\n", encoding="utf-8")
    with pytest.raises(GlossaryError, match="line 1: expected source<TAB>target"):
        Glossary.load(tsv)
    json_file.write_text('["invoice"]', encoding="utf-8")
    with pytest.raises(GlossaryError, match="object of source term"):
        Glossary.load(json_file)
    with pytest.raises(GlossaryError, match="empty glossary term"):
        Glossary({"invoice": " "})
    with pytest.raises(GlossaryError, match="cannot read"):
        Glossary.load(tmp_path / "missing.tsv")


# ---- HTML


def test_html_reader_gives_the_document_back_byte_for_byte():
    document = (
        '<!DOCTYPE html>\n<html lang="en"><head><style>p > b { x: "<i>" }</style></head>\r\n'
        "<body><p class='a'  data-x=1>Tom &amp; Jerry&nbsp;&#233;<br/>x</p><!-- note --><?pi?>\n"
        "<script>if (a < b) { s = '</p>' }</script></body></html>"
    )
    assert "".join(piece.raw for piece in read_pieces(document)) == document


def test_html_keeps_everything_but_the_text_byte_for_byte(words):
    document = (
        '<!DOCTYPE html>\n<div class="x">\n  <p data-n="1">The cat</p>\n  <!-- the dog -->\n'
        "  <pre>the cat</pre><code>the dog</code>\n  <script>var s = '<b>the cat</b>';</script>\n"
        "  <style>p { color: red }</style>\n</div>\n"
    )
    expected = document.replace('<p data-n="1">The cat</p>', '<p data-n="1">Le chat</p>')
    assert translate_html(words, [document]) == [expected]


def test_html_moves_inline_tags_with_their_words(words):
    [out] = translate_html(words, ['<p>The <b>red</b> <a href="/x?a=1&amp;b=2">cat</a> sees a dog.</p>'])
    assert out == '<p>Le <a href="/x?a=1&amp;b=2">chat</a> <b>rouge</b> voit un chien.</p>'
    [out] = translate_html(words, ["<p>Hello <em>big <strong>world</strong></em>!</p>"])
    assert out == "<p>Bonjour <em><strong>monde</strong> grand</em>!</p>"  # nested: the child stays inside


def test_html_translates_the_attributes_people_read_but_not_a_file_s_name(words):
    [out] = translate_html(
        words,
        ["<p title='The cat'><img src=a.png alt=\"a red dog\" width=3> the cat <img alt=IMG_0042.jpg></p>"],
    )
    assert (
        out
        == "<p title='Le chat'><img src=a.png alt=\"un chien rouge\" width=3> le chat <img alt=IMG_0042.jpg></p>"
    )


def test_html_given_the_translation_s_language_marks_its_text_with_it(words):
    page = (
        '<html lang="en-GB" xml:lang=en><p title="the cat" lang=\'en\'>the cat</p>'
        '<code lang="zxx">x</code><p lang="">the dog</p></html>'
    )
    [marked] = translate_html(words, [page], target_lang="fr")
    assert marked == (
        '<html lang="fr" xml:lang="fr"><p title="le chat" lang=\'fr\'>le chat</p>'
        '<code lang="zxx">x</code><p lang="">le chien</p></html>'
    )  # "no linguistic content" and empty marks stay
    [unmarked] = translate_html(words, [page])
    assert unmarked == marked.replace('"fr"', '"en-GB"', 1).replace('"fr"', "en", 1).replace("'fr'", "'en'")


@pytest.mark.parametrize(
    "page, expected",
    [
        (  # the HTML standard's mark, its attributes too
            '<p>the cat sees <span translate="no" title="the dog">the dog</span> and the house</p>',
            '<p>le chat voit <span translate="no" title="the dog">the dog</span> et le maison</p>',
        ),
        (  # nested elements of its name end where it ends; then translation resumes
            "<div translate=NO><div>the cat</div>the dog</div><p>the cat</p>",
            "<div translate=NO><div>the cat</div>the dog</div><p>le chat</p>",
        ),
        (  # an end tag that may be left out: the next start tag of its name ends it
            "<ul><li translate=no>the cat<li>the cat</ul>",
            "<ul><li translate=no>the cat<li>le chat</ul>",
        ),
        (  # a quotation in another language, in a page that says it is in the source language
            '<html lang="en-US"><p>the cat <i xml:lang="de" title="the dog">der Hund</i> sees</p></html>',
            '<html lang="en-US"><p>le chat <i xml:lang="de" title="the dog">der Hund</i> voit</p></html>',
        ),
        (  # a page that says it is in another language is translated whole (pages are often mislabelled)
            '<html lang="da"><p lang="de">the cat</p></html>',
            '<html lang="da"><p lang="de">le chat</p></html>',
        ),
        (  # and so is a page that does not say; on <html>, translate="no" keeps browsers from offering theirs
            '<p lang="de">the cat</p>',
            '<p lang="de">le chat</p>',
        ),
        ('<html translate="no"><p>the cat</p></html>', '<html translate="no"><p>le chat</p></html>'),
        (  # an empty element keeps its attributes and no more: it has no end tag to wait for
            '<p><img translate="no" alt="the cat">the cat <img translate=no alt="the dog" /></p><p>the dog</p>',
            '<p><img translate="no" alt="the cat">le chat <img translate=no alt="the dog" /></p><p>le chien</p>',
        ),
    ],
)
def test_html_keeps_what_is_marked_not_to_translate_or_as_in_another_language(words, page, expected):
    assert translate_html(words, [page]) == [expected]


def test_html_translates_a_sentence_whole_around_what_it_keeps_as_written(words):
    """An element kept as written inside a sentence (`translate="no"`, a quotation in another language, code) is
    held out as one word, a stand-in the model translates around, not a cut: the model is given the sentence whole
    ("red" then moves after the brand's name as after any noun), and each element comes back as written where its
    stand-in lands. One that is a passage's only words is left alone, and text that looks like a stand-in is text."""
    page = (
        '<html lang="en"><p>the red <span translate="no">Acme</span> cat sees <i lang="de">der Hund</i>, '
        "run <code>make <b>all</b></code>.</p><p><span translate=no>the dog</span> {kept0}</p></html>"
    )
    assert translate_html(words, [page]) == [
        '<html lang="en"><p>le <span translate="no">Acme</span> rouge chat voit <i lang="de">der Hund</i>, '
        "run <code>make <b>all</b></code>.</p><p><span translate=no>the dog</span> {kept0}</p></html>"
    ]
    assert words.calls[0][0] == "the red Tom cat sees Mary, run Boston."


def test_html_marks_the_translation_s_language_but_not_a_quotation_kept_in_its_own(words):
    page = '<html lang="en"><p lang="en-GB">the cat <i lang="de">der Hund</i></p></html>'
    assert translate_html(words, [page], target_lang="fr") == [
        '<html lang="fr"><p lang="fr">le chat <i lang="de">der Hund</i></p></html>'
    ]


def test_html_translates_the_description_and_link_card_a_page_gives_in_its_head(words):
    """As mozilla.org's page (tests/fixtures/real) gives them: what search results and shared links show."""
    head = (
        '<meta name="description" content="The red cat"><meta property="og:title" content="the big dog"/>'
        '<meta property="og:url" content="https://example.com/the-cat"><meta name="twitter:site" content="@cat">'
        '<meta name="robots" content="the cat">'
    )
    assert translate_html(words, [head]) == [
        '<meta name="description" content="Le chat rouge"><meta property="og:title" content="le chien grand"/>'
        '<meta property="og:url" content="https://example.com/the-cat"><meta name="twitter:site" content="@cat">'
        '<meta name="robots" content="the cat">'
    ]


def test_html_escapes_translated_text_and_keeps_entities_in_kept_parts(words):
    [out] = translate_html(words, ["<p>the cat &amp; the dog &lt;3</p><pre>a &amp; b</pre>"])
    assert out == "<p>le chat &amp; le chien &lt;3</p><pre>a &amp; b</pre>"


def test_html_elements_across_blocks_stay_where_they_are(words):
    document = "<b>the cat<p>the dog</p></b><i>hello</i>"  # <b> holds a block: it cannot move
    [out] = translate_html(words, [document])
    assert out == "<b>le chat<p>le chien</p></b><i>bonjour</i>"


def test_html_code_or_a_kept_span_across_a_block_s_edge_is_not_held_and_words_stay_in_their_block(words):
    """An element held as one word of its sentence (`<code>`, `translate="no"`) that a later paragraph closes
    made the two paragraphs one passage: "red" of the first went after the stand-in, into the second."""
    document = (
        '<p>the red <code>make</p><p>all</code> cat</p><p>a red <span translate="no">X<p>Y</span> dog</p>'
    )
    [out] = translate_html(words, [document])
    expected = '<p>le rouge <code>make</p><p>all</code> chat</p><p>un rouge <span translate="no">X<p>Y</span> chien</p>'
    assert out == expected
    [out] = translate_html(words, ["<p>the red <code>make</code> cat</p>"])  # inside a paragraph: held
    assert out == "<p>le <code>make</code> rouge chat</p>"


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_html_shape_stays_well_formed_with_its_tags_and_translated(words, shape):
    pairs = [("The red cat sees a dog.", ""), ("Hello big world!", "")]
    build, seen = SHAPES[shape]
    document = build(pairs[0][0], pairs[1][0])
    [out] = translate_html(words, [document])
    assert markup_problems(document, out) == []
    expected = " ".join(words.translate_with_alignment(s)[0] for s, _ in pairs[:seen])
    assert HtmlReader(out).text.replace("\xa0", " ").split() == expected.split()


def test_html_output_is_well_formed_on_generated_fragments(words):
    pairs = [
        (" ".join(["the", "red", "cat", "sees", "a", "big", "dog."][: 3 + k % 5]), "") for k in range(20)
    ]
    for _, document, _ in fragments(pairs, 40):
        [out] = translate_html(words, [document])
        assert markup_problems(document, out) == [], (document, out)


def test_the_markup_measure_finds_tags_closed_out_of_order_left_open_or_changed():
    """`measure_markup.markup_problems`, which the checks above rely on, finds each way a translation can break
    its source's markup (and nothing where it keeps it)."""
    source = '<p>the <b>cat</b> <a href="/x">sees</a></p>'
    assert markup_problems(source, '<p>le <b>chat</b> <a href="/x">voit</a></p>') == []
    assert markup_problems(source, '<p>le <b>chat</p></b> <a href="/x">voit</a>') == [
        "</p> closes b",
        "</b> closes nothing",
    ]
    assert markup_problems(source, '<p>le <b>chat</b> <a href="/x">voit</a>')[0] == "<p> left open"
    [changed] = markup_problems(source, '<p>le <b>chat</b> <a href="/y">voit</a></p>')
    assert changed.startswith("tags differ: {('a', (('href', '/x'),)): 1} lost")


def test_html_that_is_not_well_formed_is_translated_without_error(words):
    document = "<p>the cat <b>sees</p> the <i>dog</b></i> &bogus; <"
    [out] = translate_html(words, [document])
    assert "chat" in out and "chien" in out


class Unaligned(WordTranslator):
    """A weak model: translates as `WordTranslator` does but aligns no target word to the source words
    `unaligned` (or, with `short`, translates every sentence to its first word)."""

    def __init__(self, unaligned=frozenset(), short=False):
        super().__init__(LEXICON, adjectives=frozenset({"red", "big"}))
        self.unaligned, self.short = unaligned, short

    def translate_with_alignment(self, sentence):
        target, pairs = super().translate_with_alignment(sentence)
        if self.short:
            return target.split()[0], [(0, 0)]
        return target, [
            (i, j) for i, j in pairs if sentence.split()[i].strip(".").lower() not in self.unaligned
        ]


def test_an_element_whose_words_are_not_aligned_takes_the_words_between_its_neighbours():
    weak = Unaligned(frozenset({"php", "red"}))
    [out] = translate_html(weak, ['<p>The <a href="http://www.php.net/">PHP</a> cat sees a dog.</p>'])
    assert out == '<p>Le <a href="http://www.php.net/">PHP</a> chat voit un chien.</p>'
    [out] = translate_html(weak, ["<p>The <b>red</b> cat <i>sees</i> a dog.</p>"])
    assert out == "<p>Le chat <b>rouge</b> <i>voit</i> un chien.</p>"  # the unaligned word it likely is


def test_an_element_around_a_whole_block_wraps_its_whole_translation_aligned_or_not():
    """A link around a list item's whole text, a <b> around a paragraph's: the whole translation, however weak
    the alignment (before, a link whose words no target word was aligned to wrapped the first word alone)."""
    weak = Unaligned(frozenset("the cat sees a dog house is small".split()))
    page = '<ul><li><a href="/a">The cat sees a dog</a></li><li><a href="/b">the house is small</a></li></ul>'
    assert translate_html(weak, [page]) == [
        '<ul><li><a href="/a">Le chat voit un chien</a></li><li><a href="/b">le maison est petit</a></li></ul>'
    ]
    assert project_spans([Span(0, 4)], [], 6, source_words=4) == [(0, 6)]
    assert project_spans([Span(0, 4), Span(1, 2, parent=0)], [(1, 3)], 6, source_words=4) == [(0, 6), (3, 4)]


def test_no_element_with_text_comes_back_empty_even_from_a_translation_too_short():
    document = '<p>The <a href="/x">cat</a> <b>sees <i>a</i> <u>dog</u></b> <em> </em>here.</p>'
    [out] = translate_html(Unaligned(short=True), [document])
    assert markup_problems(document, out) == []
    assert out == '<p>Le <a href="/x">cat</a> <b>sees <i>a</i> <u>dog</u></b> <em></em></p>'
    # the elements' own words (and <b>'s own "sees") put back where the model wrote none; <em> had no text


def test_a_thousand_nested_elements_are_translated_without_recursion(monkeypatch):
    from hf_seq2seq.formats import markup

    document = "<p>" + "<b><span>" * 1000 + "the cat" + "</span></b>" * 1000 + " sees a dog</p>"
    with pytest.raises(markup.MarkupError, match=f"nested more than {markup.MAX_INLINE_DEPTH} deep"):
        translate_html(WordTranslator(LEXICON), [document])  # past the depth any text needs: refused by name
    monkeypatch.setattr(markup, "MAX_INLINE_DEPTH", 2000)  # allowed: placed without recursing, nothing lost
    [out] = translate_html(WordTranslator(LEXICON), [document])
    assert out == document.replace("the cat", "le chat").replace("sees a dog", "voit un chien")


# ---- what must not be translated

PROTECTED = [
    ("See https://example.com/a?b=1&c=2.", ["https://example.com/a?b=1&c=2"]),
    ("Mail jean.dupont@example.fr (or www.example.org/docs).", ["jean.dupont@example.fr", "www.example.org/docs"]),
    ("Edit /etc/nginx/nginx.conf, ~/.bashrc and src/main.py.", ["/etc/nginx/nginx.conf", "~/.bashrc", "src/main.py"]),
    ("Open C:\\Users\\tom\\report.docx then run `git status`.", ["C:\\Users\\tom\\report.docx", "`git status`"]),
    ("Hello {name}, {{count}} new: %s, %(user)s, %d, %r, {total:.2f}.", ["{name}", "{{count}}", "%s", "%(user)s", "%d", "%r", "{total:.2f}"]),
    ("It costs 1,234.56 dollars, 3.5% more, on 2026-11-27 at 10:30.", ["1,234.56", "3.5%", "2026-11-27", "10:30"]),
    ("I have 12 cats and/or dogs, e.g. this one; I'm 100 % sure.", []),
]  # fmt: skip


@pytest.mark.parametrize("sentence, spans", PROTECTED, ids=range(len(PROTECTED)))
def test_protected_spans_are_found_without_the_sentences_punctuation(sentence, spans):
    assert [sentence[start:end] for start, end in protected_spans(sentence)] == spans


def test_the_model_translates_a_sentence_with_names_in_place_of_its_spans_and_its_words_between_them():
    sentences = ["See https://example.com/a?b=1 now.", "The dog is here.", "`ls -a` and Tom's {name}.", "%s"]
    split = ProtectedSplit(sentences)
    assert split.pieces == [
        "See Tom now.", "See", "now.",  # the sentence with a name in place of the span, then the words between
        "The dog is here.",  # no span: as written
        "Mary and Tom's Boston.", "and Tom's.",  # names the sentence does not hold; the last words end it
    ]  # fmt: skip  # "%s": nothing to translate
    every_name_once = ["Voir Tom maintenant.", "Voir.", "maintenant.", "Le chien est ici.", "Mary et Boston de Tom.", "x"]  # fmt: skip
    assert split.join(every_name_once) == [
        "Voir https://example.com/a?b=1 maintenant.", "Le chien est ici.", "`ls -a` et {name} de Tom.", "%s",
    ]  # fmt: skip
    # a name dropped or repeated: the words between the spans, translated piece by piece, around the spans as
    # written (the final punctuation the model gives a piece dropped, the case of the source's first letter)
    names_lost = ["Voir maintenant.", "voir.", "Maintenant !", "Le chien est ici.", "Marie et Boston de Tom.", "Et de Tom."]  # fmt: skip
    assert split.join(names_lost) == [
        "Voir https://example.com/a?b=1 maintenant.", "Le chien est ici.", "`ls -a` et de Tom {name}.", "%s",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="5 translations for 6 pieces"):
        split.join(names_lost[:5])


def test_alternatives_keep_the_spans_too():
    from hf_seq2seq.engines.base import translate_alternatives

    class Alternatives(WordTranslator):
        def translate_hypotheses(
            self, sentences, count, batch_size=64, decoding=None, max_source_length=None
        ):
            return [[f"{s} ({k})" for k in range(count)] for s in self.translate_sentences(sentences)]

    found = translate_alternatives(Alternatives(LEXICON), ["the cat sees /etc/hosts", "/etc/hosts"], 2)
    assert found == [["le chat voit /etc/hosts (0)", "le chat voit /etc/hosts (1)"], ["/etc/hosts"]]


class Mangling(WordTranslator):
    """A model that translates what should be kept: respells a URL, translates a placeholder's name, writes a
    number the French way and drops inline code."""

    MANGLED = {"https://example.com/a?b=1": "https: //example.com/a? b=1", "{name}": "{nom}", "3.5%": "3,5 %"}

    def translate_word(self, word):
        core = word.strip(".,;:!?")
        if core.startswith("`"):
            return [""]
        return (
            [word.replace(core, self.MANGLED[core])] if core in self.MANGLED else super().translate_word(word)
        )


def test_every_format_keeps_urls_placeholders_code_and_numbers_as_written(tmp_path):
    import docx

    from hf_seq2seq.formats.documents import translate_document_bytes

    engine = Mangling(LEXICON)
    sentence = "Hello {name}, the cat sees https://example.com/a?b=1 and `ls -a` with 3.5% more."
    kept = ["{name}", "https://example.com/a?b=1", "`ls -a`", "3.5%"]
    [plain] = [result.target for result in translate_aligned(engine, [sentence], alignments=False)]
    [text_only] = translate(engine, [sentence], split_sentences=True)  # the command's and server's plain text
    [html] = translate_html(engine, [f"<p>{sentence}</p>"])
    text = translate_document_bytes(engine, sentence.encode(), ".txt").decode()
    document = docx.Document()
    document.add_paragraph(sentence)
    document.save(tmp_path / "a.docx")
    translated = translate_document_bytes(engine, (tmp_path / "a.docx").read_bytes(), ".docx")
    word = docx.Document(io.BytesIO(translated)).paragraphs[0].text
    for output in (plain, text_only, html, text, word):
        assert all(span in output for span in kept), output
        assert "Bonjour" in output and "chat" in output


def test_a_link_aligned_all_over_the_sentence_leaves_the_sentence_a_word_of_its_own():
    link = [Span(1, 2)]  # "Click [here] now": the link's word aligned to the first and the last target word
    noisy = [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert project_spans(link, noisy, 3) == [(0, 3)]  # without the source's length: the old rule
    assert project_spans(link, noisy, 3, source_words=3) == [(1, 3)]
    nested = [Span(0, 3), Span(1, 2, parent=0)]  # <b>Click <i>here</i> now</b>: <b> may take all, <i> not
    assert project_spans(nested, noisy, 3, source_words=3) == [(0, 3), (1, 3)]
