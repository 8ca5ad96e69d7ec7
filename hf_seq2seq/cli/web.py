"""`hf-seq2seq web`: a page that translates inside the browser (transformers.js) from an ONNX export, or several
(one per direction)."""

import sys

from hf_seq2seq.cli._common import parser
from hf_seq2seq.models.languages import parse_pair


def build_parser():
    p = parser(
        "web",
        "Serve a static page that translates in the browser with transformers.js and ONNX Runtime Web "
        "(WebAssembly), from an export of `hf-seq2seq export onnx`: the server only hands out files, read-only. "
        "transformers.js and ONNX Runtime Web (pinned) are installed once with npm into a cache folder "
        "(~/.cache/hf_seq2seq/web, or $HF_SEQ2SEQ_WEB_CACHE); nothing is fetched from a CDN or the Hub. "
        "Several exports, one per direction, let the user pick the direction on the page.",
        "hf-seq2seq export onnx runs/cpu runs/cpu-onnx && hf-seq2seq web runs/cpu-onnx --port 8000\n"
        "  hf-seq2seq web en-fr-onnx fr-en-onnx --languages en-fr --languages fr-en",
    )
    p.add_argument(
        "export_dir",
        nargs="*",
        help="an ONNX export folder (of `hf-seq2seq export onnx`); several: one per direction",
    )
    p.add_argument(
        "--languages",
        metavar="SRC-TGT",
        action="append",
        help="an export's language pair, e.g. en-fr, once per export in their order (default: what each export "
        "records; one that records none, made by 0.1.0, is refused unless given)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: localhost only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: a free one)")
    p.add_argument(
        "--dtype",
        choices=["fp32", "q8"],
        help="which graphs the page runs: fp32 (onnx/*.onnx) or q8 (the int8 onnx/*_quantized.onnx); "
        "default: fp32 if exported, else q8",
    )
    p.add_argument(
        "--install-js",
        action="store_true",
        help="only install transformers.js and ONNX Runtime Web into the cache (npm ci), then exit",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from hf_seq2seq.apps.webpage import install_js, make_server

    if args.install_js:
        print(f"transformers.js and ONNX Runtime Web are in {install_js()}")
        return 0
    if not args.export_dir:
        print("hf-seq2seq web: give an ONNX export folder (or --install-js)", file=sys.stderr)
        return 2
    languages = [parse_pair(text) for text in args.languages or ()]
    if None in languages or (languages and len(languages) != len(args.export_dir)):
        print(
            f"hf-seq2seq web: --languages takes SRC-TGT (e.g. en-fr), once per export; got {args.languages}",
            file=sys.stderr,
        )
        return 2
    server = make_server(
        args.export_dir, host=args.host, port=args.port, dtype=args.dtype, languages=languages
    )
    host, port = server.server_address[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    served = ", ".join(
        f"{folder} ({s.model}, {s.dtype})" for folder, s in zip(args.export_dir, server.settings, strict=True)
    )
    print(f"serving {served} at http://{shown}:{port}/ (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
