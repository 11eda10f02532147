"""Launch the real app in-process on a free 127.0.0.1 port for gradio_client and browser tests."""
from __future__ import annotations

import socket
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_app(data_dir: Path, backend: str = "baseline") -> Iterator[str]:
    """Yield the local URL of the full app (three tabs) serving `data_dir`."""
    import app

    args = app.build_parser().parse_args(["--data-dir", str(data_dir), "--backend", backend,
                                          "--port", str(free_port())])
    demo = app.launch(args, prevent_thread_lock=True)
    demo.warm_up.join(300)   # a visitor after the start-up's head start (components/common/warm.py)
    try:
        yield demo.local_url
    finally:
        demo.close()
