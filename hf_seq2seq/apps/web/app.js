// The page of `hf-seq2seq web`: translation inside the browser, with transformers.js and ONNX Runtime Web
// (WebAssembly), from the ONNX exports the server hands out under /models/<source>-<target>/ (settings.json lists
// them; with several, the user picks the direction, and each export is loaded when first picked). Every file
// comes from the server: the self-contained transformers.js bundle, ONNX Runtime Web's wasm build, and the
// exports; never a CDN or the Hugging Face Hub.
import { AutoModelForSeq2SeqLM, AutoTokenizer, Tensor, env } from './vendor/transformers.js';

const $ = (id) => document.getElementById(id);
const source = $('source');
const button = $('translate');
const output = $('output');
const status = $('status');
const details = $('details');
const direction = $('direction');

// state: loading | ready | translating | error (the browser test waits on it)
function setStatus(state, text) {
  document.body.dataset.state = state;
  status.className = state === 'error' ? 'error' : '';
  status.textContent = text;
}

async function fetchJson(url, optional = false) {
  const response = await fetch(url, { cache: 'no-cache' });
  if (!response.ok) {
    if (optional) return null;
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  return response.json();
}

// The saved length rule (fairseq/Marian, as the package's engines apply it): at most
// ceil(max_length_a * S + max_length_b) new tokens for a source of S tokens (with its </s>), within the saved
// max_new_tokens; without a rule, the saved max_new_tokens, else max_length - 1 (the decoder start counts).
export function newTokenLimit(generation, sourceLength) {
  const { max_length_a: a, max_length_b: b, max_new_tokens: cap, max_length: maxLength } = generation;
  if (a != null && b != null) {
    const limit = Math.max(1, Math.ceil(Math.round((a * sourceLength + b) * 1e6) / 1e6));
    return cap ? Math.min(limit, cap) : limit;
  }
  return cap ?? Math.max(1, (maxLength ?? 256) - 1);
}

// The source ids, truncated as the package's engines truncate (transformers' tokenizers): the text's tokens
// are cut so that they and the special tokens (</s>) fit in maxLength. transformers.js's own truncation
// would cut the </s> off the end instead.
function encodeSource(tokenizer, text, maxLength) {
  const full = tokenizer.encode(text);
  if (full.length <= maxLength) return full;
  const plain = tokenizer.encode(text, { add_special_tokens: false });
  const prefixLength = Math.max(0, full.indexOf(plain[0]));
  const prefix = full.slice(0, prefixLength);
  const suffix = full.slice(prefixLength + plain.length);
  return [...prefix, ...plain.slice(0, Math.max(0, maxLength - prefix.length - suffix.length)), ...suffix];
}

async function main() {
  const settings = await fetchJson('settings.json');
  env.allowRemoteModels = false; // never the Hub
  env.allowLocalModels = true; // model ids resolve to localModelPath + id, on this server
  env.localModelPath = settings.localModelPath;
  env.useBrowserCache = false; // a new export in the same folder must be seen on reload
  env.useWasmCache = false;
  const here = (name) => new URL(`vendor/ort/${name}`, window.location.href).href;
  env.backends.onnx.wasm.wasmPaths = {
    mjs: here('ort-wasm-simd-threaded.asyncify.mjs'),
    wasm: here('ort-wasm-simd-threaded.asyncify.wasm'),
  };

  // each export's tokenizer, model and saved decoding, loaded when its direction is first picked
  const loaded = new Map();
  async function load(entry) {
    if (!loaded.has(entry.model)) {
      setStatus('loading', `Loading the ${entry.sourceName} → ${entry.targetName} model (${entry.dtype})…`);
      const base = `${settings.localModelPath}${entry.model}/`;
      const generation = (await fetchJson(`${base}generation_config.json`, true)) ?? {};
      const tokenizer = await AutoTokenizer.from_pretrained(entry.model);
      const model = await AutoModelForSeq2SeqLM.from_pretrained(entry.model, { dtype: entry.dtype, device: 'wasm' });
      loaded.set(entry.model, { entry, generation, tokenizer, model });
    }
    return loaded.get(entry.model);
  }

  let current = null;
  async function choose(entry) {
    button.disabled = true;
    $('title').textContent = `${entry.sourceName} → ${entry.targetName}`;
    $('source-label').textContent = entry.sourceName;
    $('output-label').textContent = entry.targetName;
    source.placeholder = entry.source === 'en' ? 'Type an English sentence, e.g. How are you?' : `Type a sentence in ${entry.sourceName}`;
    output.textContent = '';
    current = await load(entry);
    const { generation } = current;
    const limits = generation.max_length_a != null
      ? `at most ${generation.max_length_a} × source tokens + ${generation.max_length_b} new tokens`
      : `at most ${newTokenLimit(generation, 0)} new tokens`;
    details.textContent = `Model: ${entry.dtype} ONNX export (transformers.js ${env.version}); greedy decoding, ` +
      `${limits}; sources longer than ${entry.maxSourceLength} tokens are truncated.`;
    button.disabled = false;
    setStatus('ready', 'Ready.');
  }

  async function translateLine(line) {
    const { entry, generation, tokenizer, model } = current;
    const ids = encodeSource(tokenizer, line, entry.maxSourceLength);
    const inputIds = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
    const attentionMask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
    const generated = await model.generate({
      input_ids: inputIds,
      attention_mask: attentionMask,
      do_sample: false,
      num_beams: 1,
      min_new_tokens: 1, // the end token never first: a word is not translated into nothing
      max_new_tokens: newTokenLimit(generation, ids.length),
    });
    // a translation that is still blank (a first token that decodes to nothing) gives the source back
    return tokenizer.batch_decode(generated, { skip_special_tokens: true })[0].trim() || line;
  }

  async function translate() {
    const lines = source.value.split('\n');
    if (!lines.some((line) => line.trim())) {
      output.textContent = '';
      setStatus('ready', `Type a sentence in ${current.entry.sourceName}, then press Translate.`);
      return;
    }
    button.disabled = true;
    setStatus('translating', 'Translating…');
    const started = performance.now();
    try {
      const translated = [];
      for (const line of lines) {
        translated.push(line.trim() ? await translateLine(line.trim()) : '');
      }
      output.textContent = translated.join('\n');
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      setStatus('ready', `Ready. Translated in ${seconds} s (greedy, in this browser).`);
    } catch (error) {
      console.error(error);
      setStatus('error', `Error: ${error?.message ?? error}`);
    } finally {
      button.disabled = false;
    }
  }

  for (const entry of settings.models) {
    direction.append(new Option(`${entry.sourceName} → ${entry.targetName}`, entry.model));
  }
  $('direction-row').hidden = settings.models.length < 2;
  direction.addEventListener('change', () => {
    choose(settings.models.find((entry) => entry.model === direction.value)).catch((error) => {
      console.error(error);
      setStatus('error', `Error: could not load the model: ${error?.message ?? error}`);
    });
  });
  button.addEventListener('click', translate);
  source.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) translate();
  });
  await choose(settings.models[0]);
}

main().catch((error) => {
  console.error(error);
  setStatus('error', `Error: could not load the model: ${error?.message ?? error}`);
});
