"""A mock OpenAI-compatible completions server, for recording real load generators' files without a GPU
(methods.md#a-service-judged-from-its-requests). Standard library only; binds 127.0.0.1; stops after --max-seconds.

    python tests/serving/mock_openai.py --port 8123 [--slots 16] [--seed 7] [--fail-share 0] [--no-stream]

Delay model, seeded per request: K slots served first come, first served; TTFT = the wait for a slot + a + b × prompt
words (a = 40 ms, b = 0.05 ms); each further token after c × (1 + γ (busy − 1)/(K − 1)) × LogNormal(0, σ)
(c = 10 ms, γ = 0.5, σ = 0.1). Streams SSE chunks of `--chunk-tokens` tokens (`choices[0].text`, or
`choices[0].delta.content` for chat), then a usage chunk when `stream_options.include_usage`, then `[DONE]`;
`max_tokens` (or `max_completion_tokens`) is honoured exactly. `--usage-skew` adds that share to the usage count."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import time

WORDS = [f"w{index}" for index in range(1000)]


class Server:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.slots = asyncio.Semaphore(options.slots)
        self.busy = 0
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await reader.readline()
                if not request:
                    break
                method, path, _ = request.decode("latin-1").split(" ", 2)
                headers = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if method == "GET" and path.startswith("/health"):  # GuideLLM checks the server first
                    await self.send_json(writer, {"status": "ok"})
                elif method == "GET" and path.startswith("/v1/models"):
                    await self.send_json(writer, {"object": "list", "data": [{"id": "mock", "root": "mock",
                                                                              "object": "model"}]})
                elif method == "POST" and path.startswith(("/v1/completions", "/v1/chat/completions")):
                    await self.complete(writer, json.loads(body or b"{}"), chat="chat" in path)
                else:
                    await self.send_json(writer, {"error": "not found"}, status="404 Not Found")
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def send_json(self, writer: asyncio.StreamWriter, document: object, status: str = "200 OK") -> None:
        data = json.dumps(document).encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                     .encode() + data)
        await writer.drain()

    async def chunk(self, writer: asyncio.StreamWriter, text: str) -> None:
        data = text.encode()
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()

    async def complete(self, writer: asyncio.StreamWriter, body: dict, *, chat: bool) -> None:
        options = self.options
        self.requests += 1
        rng = random.Random(options.seed * 1_000_003 + self.requests)
        prompt = body.get("prompt") if not chat else " ".join(str(m.get("content", "")) for m in body["messages"])
        prompt_tokens = len(str(prompt).split())
        wanted = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        stream = bool(body.get("stream")) and not options.no_stream
        usage_wanted = bool((body.get("stream_options") or {}).get("include_usage"))
        failing = rng.random() < options.fail_share
        async with self.slots:
            self.busy += 1
            try:
                await asyncio.sleep(0.040 + 0.00005 * prompt_tokens)
                if failing:
                    await self.send_json(writer, {"error": {"message": "mock failure"}}, status="500 Internal Error")
                    return
                created = int(time.time())
                kind = "chat.completion.chunk" if chat else "text_completion"
                if stream:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                text = []
                produced = 0
                while produced < wanted:
                    if produced:
                        stretch = 1 + 0.5 * (self.busy - 1) / max(options.slots - 1, 1)
                        await asyncio.sleep(0.010 * stretch * math.exp(rng.gauss(0.0, 0.1)) * options.chunk_tokens)
                    words = [rng.choice(WORDS) for _ in range(min(options.chunk_tokens, wanted - produced))]
                    produced += len(words)
                    piece = " " + " ".join(words)
                    text.append(piece)
                    if stream:
                        choice = {"index": 0, "delta": {"content": piece}} if chat else {"index": 0, "text": piece}
                        await self.chunk(writer, "data: " + json.dumps(
                            {"id": f"r{self.requests}", "object": kind, "created": created, "model": "mock",
                             "choices": [{**choice, "finish_reason": None}]}) + "\n\n")
                completion = round(produced * (1 + options.usage_skew))
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                         "total_tokens": prompt_tokens + completion}
                if stream:
                    if usage_wanted:
                        await self.chunk(writer, "data: " + json.dumps(
                            {"id": f"r{self.requests}", "object": kind, "created": created, "model": "mock",
                             "choices": [], "usage": usage}) + "\n\n")
                    await self.chunk(writer, "data: [DONE]\n\n")
                    await self.chunk(writer, "")
                else:
                    content = "".join(text)
                    choice = {"index": 0, "message": {"role": "assistant", "content": content}} if chat else \
                        {"index": 0, "text": content}
                    await self.send_json(writer, {"id": f"r{self.requests}", "object": kind.split(".chunk")[0],
                                                  "created": created, "model": "mock",
                                                  "choices": [{**choice, "finish_reason": "length"}], "usage": usage})
            finally:
                self.busy -= 1


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8123)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fail-share", type=float, default=0.0)
    parser.add_argument("--no-stream", action="store_true")
    parser.add_argument("--chunk-tokens", type=int, default=1)
    parser.add_argument("--usage-skew", type=float, default=0.0)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    options = parser.parse_args()
    server = Server(options)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", options.port)
    async with listening:
        await asyncio.sleep(options.max_seconds)


if __name__ == "__main__":
    asyncio.run(main())
