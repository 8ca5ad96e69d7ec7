"""Plain helpers several test files share (`from helpers import ...`): the real corpus's path, a synthetic corpus,
a tiny word-level model folder, the flags of a tiny training run. The fixtures built on them are in conftest.py."""

import itertools
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration
from hf_seq2seq.data.tokenization import train_tokenizer
from hf_seq2seq.engines.base import Translator
from hf_seq2seq.evaluation.report import EvalReport
from hf_seq2seq.models.folder import register_pipeline, save_model_folder
from hf_seq2seq.training.saved_decoding import greedy_generation_config

ROOT = Path(__file__).resolve().parents[1]
FRA_TXT = ROOT.parent / "shared" / "data" / "fra-eng" / "fra.txt"  # the real corpus, for tests about it alone
TEST_SETS_DIR = (
    ROOT.parent / "shared" / "data" / "tatoeba-test-eng-fra"
)  # the standard Tatoeba test set's files

# A synthetic English-French corpus: every "<subject> <verb> a <adjective> <noun> ." in both languages
SUBJECTS = [
    ("the boy", "le garçon"),
    ("the girl", "la fille"),
    ("my friend", "mon ami"),
    ("the teacher", "le professeur"),
    ("his father", "son père"),
    ("her mother", "sa mère"),
    ("the king", "le roi"),
    ("the doctor", "le médecin"),
    ("our neighbour", "notre voisin"),
    ("the child", "l'enfant"),
]
VERBS = [
    ("sees", "voit"),
    ("likes", "aime"),
    ("wants", "veut"),
    ("finds", "trouve"),
    ("draws", "dessine"),
    ("buys", "achète"),
]
ADJECTIVES = [
    ("red", "rouge"),
    ("blue", "bleu"),
    ("black", "noir"),
    ("green", "vert"),
    ("small", "petit"),
    ("white", "blanc"),
    ("big", "grand"),
    ("cheap", "bon marché"),
]
NOUNS = [
    ("cat", "chat"),
    ("dog", "chien"),
    ("book", "livre"),
    ("bike", "vélo"),
    ("boat", "bateau"),
    ("pen", "stylo"),
    ("train", "train"),
    ("hat", "chapeau"),
    ("truck", "camion"),
    ("ball", "ballon"),
]


def synthetic_pairs() -> list[tuple[str, str]]:
    """4800 unique sources; those with "likes" have a second translation (some rows have two references)."""
    pairs = []
    for (s_en, s_fr), (v_en, v_fr), (a_en, a_fr), (n_en, n_fr) in itertools.product(
        SUBJECTS, VERBS, ADJECTIVES, NOUNS
    ):
        source = f"{s_en} {v_en} a {a_en} {n_en} ."
        pairs.append((source, f"{s_fr} {v_fr} un {n_fr} {a_fr} ."))
        if v_en == "likes":
            pairs.append((source, f"{s_fr} adore un {n_fr} {a_fr} ."))
    return pairs


def write_fra_txt(path: Path, seed: int | None = None) -> Path:
    """The synthetic corpus as a fra.txt (`English<TAB>French` lines): in generation order, or with `seed`
    in a seeded random order (so that its first few hundred pairs mix every subject, verb and noun)."""
    pairs = synthetic_pairs()
    if seed is not None:
        random.Random(seed).shuffle(pairs)
    path.write_text("".join(f"{en}\t{fr}\n" for en, fr in pairs), encoding="utf-8")
    return path


# the words of `tiny_tokenizer`
ENGLISH = (
    "how are you ? i like cheese . good morning thank ! the a cat dog sat on mat is here big small red house"
)
FRENCH = "comment allez vous je aime le fromage bonjour merci la chat chien est sur tapis ici grand rouge"
SPECIAL = ["<pad>", "</s>", "<unk>"]  # the project tokenizer's layout: pad 0, eos 1, unk 2, no bos
VOCAB = {token: i for i, token in enumerate(SPECIAL + ENGLISH.split() + FRENCH.split())}
# the special ids of a model over `tiny_tokenizer`'s vocabulary; the decoder starts from pad, like the project's
TOKENIZER_IDS = dict(
    pad_token_id=VOCAB["<pad>"],
    bos_token_id=None,
    eos_token_id=VOCAB["</s>"],
    decoder_start_token_id=VOCAB["<pad>"],
)
# ids of the tiny random networks (no tokenizer): pad, bos (= decoder start), eos, vocabulary size
PAD, BOS, EOS, TINY_VOCAB = 0, 1, 2, 40
REPO_ID = "someone/tiny-en-fr"
REPORT = EvalReport(
    bleu=12.3456,
    chrf=34.5678,
    bleu_signature="nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1",
    chrf_signature="nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1",
    num_sentences=7,
    num_references=3,
    training={
        "preset": "tiny",
        "global_step": 3,
        "learning_rate": 0.0007,
        "best_checkpoint": "/home/me/run/ckpt-3",
    },
)


def tiny_config(**overrides) -> TransformerMTConfig:
    """A 2+2-layer, d_model 32 network config over TINY_VOCAB ids, dropout off; `overrides` change any field."""
    kwargs = dict(
        vocab_size=TINY_VOCAB,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=48,
        dropout=0.0,
        max_position_embeddings=64,
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
        decoder_start_token_id=BOS,
    )
    return TransformerMTConfig(**(kwargs | overrides))


def tiny_tokenizer(vocab: dict[str, int] = VOCAB) -> PreTrainedTokenizerFast:
    """A word-level tokenizer over `vocab` (default: `ENGLISH` and `FRENCH`) that appends `</s>`, wrapped for
    `AutoTokenizer`."""
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", VOCAB["</s>"])]
    )
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=32
    )


def make_trained_folder(path: Path, seed: int = 0, report: EvalReport | None = REPORT) -> Path:
    """A folder as training saves it: a tiny random model (ids matching `tiny_tokenizer`), its tokenizer, the
    pipeline code, the saved greedy decoding, and (unless `report` is None) a test report."""
    torch.manual_seed(seed)
    config = TransformerMTConfig(
        vocab_size=len(VOCAB),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        dropout=0.0,
        max_position_embeddings=32,
        **TOKENIZER_IDS,
    )
    model = TransformerMTForConditionalGeneration(config)
    model.generation_config = greedy_generation_config(model, (1.5, 4))
    register_pipeline(model, "en", "fr")
    save_model_folder(model, tiny_tokenizer(), path)
    if report is not None:
        report.save(path)
    return path


# what `train_memorising_folder` trains on (and `fixtures/folder-0.1.0` was trained on): `tiny_tokenizer` words
MEMORISED_PAIRS = [
    ("how are you ?", "comment allez vous ?"),
    ("i like cheese .", "je aime le fromage ."),
    ("good morning !", "bonjour !"),
    ("the cat is here .", "le chat est ici ."),
    ("the big dog sat on the mat .", "le grand chien est sur le tapis ."),
    ("thank you !", "merci !"),
]
# a third pair for the servers of several models: German into English, which English -> French continues
GERMAN = "wie geht es dir ich mag käse guten morgen danke"  # with `ENGLISH`'s punctuation
GERMAN_PAIRS = [
    ("wie geht es dir ?", "how are you ?"),
    ("ich mag käse .", "i like cheese ."),
    ("guten morgen !", "good morning !"),
    ("danke !", "thank you !"),
]
GERMAN_VOCAB = {token: i for i, token in enumerate(SPECIAL + ENGLISH.split() + GERMAN.split())}
FIXTURES = ROOT / "tests" / "fixtures"
LEGACY_FOLDER = FIXTURES / "folder-0.1.0"  # saved before the transformers 5.24 fix (fixtures/README.md)


def train_memorising_folder(
    path: Path,
    steps: int = 400,
    normalize_before: bool = False,
    pairs: list[tuple[str, str]] = MEMORISED_PAIRS,
    languages: tuple[str, str] = ("en", "fr"),
    vocab: dict[str, int] = VOCAB,
) -> Path:
    """A 2+2-layer model (d_model 32, post-LN unless `normalize_before`) trained in a few seconds to translate
    `pairs` (default `MEMORISED_PAIRS`) exactly (AdamW, full batch), saved as training saves a folder with
    `tiny_tokenizer(vocab)`, recording `languages` as its pair; the recipe of `fixtures/folder-0.1.0`."""
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer(vocab)
    config = TransformerMTConfig(
        vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, dropout=0.0, max_position_embeddings=32,
        normalize_before=normalize_before, **TOKENIZER_IDS,
    )  # fmt: skip
    model = TransformerMTForConditionalGeneration(config)
    sources, targets = zip(*pairs, strict=True)
    batch = tokenizer(list(sources), text_target=list(targets), padding=True, return_tensors="pt")
    batch["labels"] = batch["labels"].masked_fill(batch["labels"] == tokenizer.pad_token_id, -100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    model.generation_config = greedy_generation_config(model, (1.5, 4))
    register_pipeline(model, *languages)
    return save_model_folder(model, tokenizer, path)


def built_once(tmp_path_factory, name: str, build) -> Path:
    """`build(folder)`'s result (a path under `folder`, which it creates), made once in the whole test run
    however many pytest-xdist workers ask for it: the first to ask builds it while holding a lock, the others
    wait and read it. A model export takes most of a minute; each worker making its own doubled that. Outside
    xdist, the session's own folder holds it (never a folder that outlives the run: a change to the code it
    builds with must be tested)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, in which each worker has its own
    folder, done = root / "built-once" / name, root / "built-once" / f"{name}.built"
    folder.parent.mkdir(exist_ok=True)
    with FileLock(str(root / "built-once" / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed first try left
            done.write_text(str(Path(build(folder)).relative_to(folder)), encoding="utf-8")
    return folder / done.read_text(encoding="utf-8")


def copy_without_pair(folder: Path, destination: Path) -> Path:
    """A copy of the model folder `folder` that records no language pair: its config's pipeline is `translation`
    alone, as `save_model_folder` writes it for a model whose direction was never registered."""
    import json
    import shutil

    shutil.copytree(folder, destination)
    config = json.loads((destination / "config.json").read_text(encoding="utf-8"))
    pipelines = config["custom_pipelines"]
    config["custom_pipelines"] = {"translation": next(iter(pipelines.values()))}
    (destination / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return destination


def tiny_args(data_path: Path, output_dir: Path, *extra: str) -> list[str]:
    """`hf-seq2seq train` flags for a tiny run on the first 300 train pairs of `data_path` (a fra.txt)."""
    return [
        "--preset", "tiny",
        "--data_path", str(data_path),
        "--output_dir", str(output_dir),
        "--max_train_samples", "300",
        "--max_eval_samples", "40",
        "--max_test_samples", "40",
        "--per_device_train_batch_size", "32",
        "--eval_steps", "100",
        "--save_steps", "100",
        *extra,
    ]  # fmt: skip


# a random model with large weights over a small trained tokenizer: what the export tests translate with
RANDOM_MODEL_CORPUS = [
    "the cat sat on the mat .",
    "le chat est assis sur le tapis .",
    "where is the dog ?",
    "où est le chien ?",
    "i like green apples and red cheese .",
    "j'aime les pommes vertes et le fromage rouge .",
]


def random_model_tokenizer():
    """A BPE tokenizer trained on `RANDOM_MODEL_CORPUS` (120 ids, sources of at most 16 tokens)."""
    return train_tokenizer(RANDOM_MODEL_CORPUS * 20, vocab_size=120, model_max_length=16)


def save_random_model(tokenizer, folder, normalize_before=False, seed=0, length_rule=(1.5, 4), layers=2):
    """A `layers`+`layers`-layer random model (d_model 32, 4 heads) whose outputs differ from token to token, saved
    as en-fr with `tokenizer` and the greedy decoding with `length_rule`."""
    config = TransformerMTConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
        normalize_before=normalize_before, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = TransformerMTForConditionalGeneration(config).eval()
    with torch.no_grad():  # larger weights than the init, so that random outputs differ from token to token
        for parameter in model.parameters():
            parameter.mul_(3.0)
    model.generation_config = greedy_generation_config(model, length_rule)
    register_pipeline(model, "en", "fr")  # as training records a folder's pair
    return save_model_folder(model, tokenizer, folder)


def save_fixed_choice_model(tokenizer, folder: Path, logits: dict[int, float]) -> Path:
    """A 1+1-layer pre-LN model whose every decoding step scores the tokens alike, whatever it reads: its decoder's
    last LayerNorm gives one vector, on which the output layer gives each token id of `logits` that logit and every
    other about 0. Saved with `tokenizer` and the greedy decoding of `save_random_model`. One layer each: its layers
    change nothing it writes, and an export traces every one (37 s against 50 for two on the AVX2 EPYC)."""
    save_random_model(tokenizer, folder, normalize_before=True, layers=1)
    model = TransformerMTForConditionalGeneration.from_pretrained(folder)
    direction = torch.nn.functional.normalize(
        torch.randn(model.config.d_model, generator=torch.Generator().manual_seed(0)), dim=0
    )
    with torch.no_grad():
        norm = model.model.decoder.layer_norm
        norm.weight.zero_()
        norm.bias.copy_(direction)  # (D,): every position's output, whatever the input
        output = model.get_output_embeddings().weight  # (V, D), tied to the embeddings
        output.mul_(0.01)
        for token, logit in logits.items():
            output[token] = logit * direction
    return save_model_folder(model, tokenizer, folder)


def save_end_first_model(tokenizer, folder: Path, first: str | None) -> Path:
    """A model that would translate every source into nothing (`save_fixed_choice_model`): the end token scores
    highest and the token `first` second (None: the padding token, a first token that decodes to nothing). Saved
    with the greedy decoding as releases before 0.2 saved it, without `min_new_tokens`: what an engine forbids by
    itself. What every engine and path must translate into something, whatever the model's quality."""
    second = tokenizer.pad_token_id if first is None else tokenizer.convert_tokens_to_ids(first)
    save_fixed_choice_model(tokenizer, folder, {second: 50, tokenizer.eos_token_id: 100})
    model = TransformerMTForConditionalGeneration.from_pretrained(folder)
    model.generation_config.min_new_tokens = None
    return save_model_folder(model, tokenizer, folder)


def save_babbling_model(tokenizer, folder: Path, word: str, end: float) -> Path:
    """A model that answers every source with `word` over and over up to its length limit: `word` scores 50 at
    every step and the end token `end` (49: the n best also hold shorter translations; 0: none ends early); its
    saved decoding bans no repeated n-gram."""
    word_id = tokenizer.convert_tokens_to_ids(word)
    save_fixed_choice_model(tokenizer, folder, {word_id: 50, tokenizer.eos_token_id: end})
    model = TransformerMTForConditionalGeneration.from_pretrained(folder)
    model.generation_config.no_repeat_ngram_size = 0
    return save_model_folder(model, tokenizer, folder)


def every_engine(folder: Path, tmp_path: Path, onnx_export: Path | None = None):
    """The torch engine (fp32, int8) and CTranslate2 (int8) on `folder`'s model, and ONNX Runtime on its export
    `onnx_export` where one is given (an export takes most of a minute: the callers share theirs)."""
    from hf_seq2seq.engines.factory import load_translator
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    yield load_translator(folder)
    yield load_translator(folder, precision="int8")
    yield load_translator(export_ctranslate2(folder, tmp_path / "ct2", quantization="int8"), "ctranslate2")
    if onnx_export is not None:
        yield load_translator(onnx_export, "onnxruntime")


def run_without_package(body: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run the Python code `body` as a Hub user would, in a fresh process where `hf_seq2seq` cannot be imported
    (only torch and transformers), offline, with its own remote-code module cache under `cwd`, the extra `env`
    and an empty stdin (a prompt fails); stdout and stderr together in `.stdout`."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["hf_seq2seq"] = None  # the package must not be importable
        try:
            import hf_seq2seq
        except ImportError:
            pass
        else:
            raise SystemExit("hf_seq2seq is importable")
        """
    ) + textwrap.dedent(body)
    environment = dict(os.environ, HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(Path(cwd) / "modules"), **env)
    environment.pop("TRANSFORMERS_VERBOSITY", None)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now (the OS picks it), for a server or process group a test starts."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class WordTranslator(Translator):
    """A fake engine that translates word by word with a lexicon (source word -> target words; unknown words
    copied; punctuation and a leading capital kept), writes an adjective of `adjectives` after the word that
    follows it ("red cat" -> "chat rouge"), and aligns exactly what it did: for tests of what is built on
    translations and alignments (glossaries, markup, documents), whatever a model would say."""

    engine = "words"
    precision = "fp32"
    parameters = 0
    max_source_length = 32

    def __init__(self, lexicon: dict[str, str], adjectives: frozenset[str] = frozenset()):
        self.lexicon, self.adjectives = lexicon, adjectives
        self.tokenizer = tiny_tokenizer()
        self.calls: list[list[str]] = []

    def translate_word(self, word: str) -> list[str]:
        core = word.strip(".,;:!?\"'()")
        lead, trail = (
            word[: word.index(core)] if core else word,
            word[word.index(core) + len(core) :] if core else "",
        )
        out = self.lexicon.get(core.lower(), core).split() or [""]  # punctuation alone: kept as written
        if core[:1].isupper():
            out[0] = out[0][:1].upper() + out[0][1:]
        out[0] = lead + out[0]
        out[-1] += trail  # the same word as out[0] when there is one
        return out

    def translate_with_alignment(self, sentence: str) -> tuple[str, list[tuple[int, int]]]:
        source = sentence.split()
        order, i = list(range(len(source))), 0
        while i < len(source) - 1:
            if source[i].strip(".,;:!?").lower() in self.adjectives:
                order[i], order[i + 1] = i + 1, i
                i += 1
            i += 1
        target, pairs = [], []
        for position, i in enumerate(order):  # punctuation stays where it was written
            core = source[i].strip(".,;:!?")
            written = (
                source[position].replace(source[position].strip(".,;:!?"), core, 1) if core else source[i]
            )
            for word in self.translate_word(written):
                pairs.append((i, len(target)))
                target.append(word)
        return " ".join(target), sorted(pairs)

    def translate_sentences(
        self, sentences, batch_size=64, decoding=None, max_source_length=None, progress=False
    ):
        self.calls.append(list(sentences))
        return [self.translate_with_alignment(s)[0] if s.strip() else "" for s in sentences]

    def align(self, sources, targets, batch_size=64, rule=None):
        out = []
        for source, target in zip(sources, targets, strict=True):
            translation, pairs = self.translate_with_alignment(source)
            out.append(
                pairs
                if translation == target
                else [(j, j) for j in range(min(len(source.split()), len(target.split())))]
            )
        return out

    @property
    def generation_config(self):
        from transformers import GenerationConfig

        return GenerationConfig()


class Unaligned(WordTranslator):
    """Translates word by word but aligns nothing: where no target word is aligned to a run's words."""

    def align(self, sources, targets, *args, **kwargs):
        return [[] for _ in sources]


# ---- gettext catalogues (tests/fixtures/gettext/README.md)
GETTEXT = FIXTURES / "gettext"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # `.ci/run` sets CI=true
PLACEHOLDER = re.compile(r"%\(\w+\)[-#0+ ]*\d*(?:\.\d+)?[a-zA-Z]|%[-#0+ ]*\d*(?:\.\d+)?[a-zA-Z%]|\{\w*\}")
"""printf-style and Python brace placeholders, as gettext's python-format and python-brace-format read them."""


def msgfmt_check(path: Path) -> None:
    """`msgfmt --check --use-fuzzy` accepts the catalogue `path` (every check, fuzzy messages included). Without
    msgfmt (Debian's gettext package) the test skips, except in CI, where it fails."""
    import pytest

    if shutil.which("msgfmt") is None:
        if IN_CI:
            pytest.fail("msgfmt is missing: .ci/run installs Debian's gettext package")
        pytest.skip("msgfmt is missing (apt-get install gettext)")
    checked = subprocess.run(
        ["msgfmt", "--check", "--use-fuzzy", "-o", os.devnull, str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def check_filled_catalogue(source: str, translated: str) -> int:
    """Assert that catalogue `translated` is `source` with each untranslated message filled as a user relies
    on: marked fuzzy, every plural form the header declares, never empty, the same placeholders (as a
    multiset) and leading and trailing whitespace as what it translates; every other entry (translated,
    obsolete) written byte for byte, and the header saying the target's plural forms. Returns how many
    messages were filled."""
    import polib

    before, after = polib.pofile("\n" + source), polib.pofile("\n" + translated)
    nplurals = int(re.search(r"nplurals\s*=\s*(\d+)", after.metadata["Plural-Forms"])[1])
    assert [(e.msgctxt, e.msgid) for e in before] == [(e.msgctxt, e.msgid) for e in after]
    blocks = [block for block in source.split("\n\n") if "msgid" in block]
    filled = 0
    for block, old, new in zip(blocks[1:] if before.metadata else blocks, before, after, strict=True):
        untranslated = not old.obsolete and (
            any(not form for form in old.msgstr_plural.values()) if old.msgid_plural else not old.msgstr
        )
        if not untranslated:
            assert block.strip("\n") in translated, block  # byte for byte
            continue
        filled += 1
        assert "fuzzy" in new.flags, new
        forms = (
            {
                k: (old.msgid if k == 0 else old.msgid_plural, new.msgstr_plural.get(k))
                for k in range(nplurals)
            }
            if old.msgid_plural
            else {0: (old.msgid, new.msgstr)}
        )
        assert not old.msgid_plural or sorted(new.msgstr_plural) == list(range(nplurals)), new
        for text, form in forms.values():
            assert form and form.strip(), new  # never empty
            assert Counter(PLACEHOLDER.findall(form)) == Counter(PLACEHOLDER.findall(text)), (text, form)
            assert re.match(r"\s*", form)[0] == re.match(r"\s*", text)[0], (text, form)
            assert re.search(r"\s*$", form)[0] == re.search(r"\s*$", text)[0], (text, form)
    return filled


# ---- PDF documents (the `pdf` extra; tests/test_pdf.py draws its own, richer ones)
def needs_pdf_extra() -> None:
    """Skip the calling test unless the `pdf` extra (pikepdf, pdfminer.six, reportlab) is installed."""
    import pytest

    for module in ("pikepdf", "pdfminer", "reportlab"):
        pytest.importorskip(module, reason='the pdf extra: pip install "hf_seq2seq[pdf]"')


def text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF drawn with reportlab: a Letter page for each item of `pages`, each of its texts a paragraph of one
    line in Times-Roman 12, 60 points below the one before."""
    import io

    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(612, 792))
    for texts in pages:
        canvas.setFont("Times-Roman", 12)
        for k, text in enumerate(texts):
            canvas.drawString(72, 700 - 60 * k, text)
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def pdf_page_texts(data: bytes) -> list[str]:
    """The text pdfminer.six reads on each page of the PDF `data`, whitespace collapsed (a paragraph whose
    translation is longer than its source may take two lines)."""
    import io

    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return [
        " ".join(" ".join(box.get_text() for box in page if isinstance(box, LTTextContainer)).split())
        for page in extract_pages(io.BytesIO(data))
    ]
