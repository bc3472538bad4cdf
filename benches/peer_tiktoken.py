"""The peer: OpenAI's Python tiktoken merely counting texts (one JSON string per line).

usage: peer_tiktoken.py TEXTS ENCODING THREADS

Prints one JSON object: the time to import tiktoken and load the encoding, the time to count every
text with `encode_ordinary` in a plain loop (one thread), and with `encode_ordinary_batch` on
THREADS threads, and the token totals (which must equal ctxbudget's). Run offline with
TIKTOKEN_CACHE_DIR holding the rank files (benches/peers.py sets it up).
"""

import json
import sys
import time


def main() -> None:
    path, encoding, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path, encoding="utf-8") as f:
        texts = [json.loads(line) for line in f]
    start = time.perf_counter()
    import tiktoken

    enc = tiktoken.get_encoding(encoding)
    enc.encode_ordinary("warm up")
    init = time.perf_counter() - start

    start = time.perf_counter()
    tokens = sum(len(enc.encode_ordinary(t)) for t in texts)
    loop = time.perf_counter() - start

    start = time.perf_counter()
    batch_tokens = sum(map(len, enc.encode_ordinary_batch(texts, num_threads=threads)))
    batch = time.perf_counter() - start

    print(json.dumps({
        "version": tiktoken.__version__, "encoding": encoding, "texts": len(texts),
        "bytes": sum(len(t.encode("utf-8")) for t in texts), "init_s": init,
        "count_s": loop, "tokens": tokens, "batch_s": batch, "batch_tokens": batch_tokens,
        "threads": threads,
    }))


if __name__ == "__main__":
    main()
