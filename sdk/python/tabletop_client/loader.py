"""A bot named ``module.path:ClassName``, as the command line names one."""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

# ``pkg.mod:Class``: a dotted module path, one colon, a class name (no ``=``: that is a
# built-in bot's ``name:setting=value``).
BOT_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_]\w*$")


def is_bot_path(text: str) -> bool:
    """Whether ``text`` is spelt ``module.path:ClassName``."""
    return BOT_PATH.match(text.strip()) is not None


def load_bot_class(path: str) -> type:
    """The class ``path`` names; ValueError (one line) when it cannot be had. The current
    directory is searched too, as ``python -m`` would, so a bot beside the caller loads from
    a console script."""
    text = path.strip()
    if not is_bot_path(text):
        raise ValueError(f"{path!r} is not module.path:ClassName")
    module_name, _, class_name = text.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"{module_name} has no class {class_name}")
    if not callable(getattr(cls, "act", None)):
        raise ValueError(f"{text} has no act(view, legal_commands) method")
    return cls


def load_bot(path: str) -> Any:
    """An instance of the bot class ``path`` names (made without arguments)."""
    cls = load_bot_class(path)
    try:
        return cls()
    except Exception as exc:
        raise ValueError(f"{path.strip()}() failed: {type(exc).__name__}: {exc}") from None
