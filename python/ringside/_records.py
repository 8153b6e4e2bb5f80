"""The records of docs/metrics.md: checking what a script logs, JSON Lines text, and the run's
parameters flattened to dotted keys.

Bounds are the agent's (agent/include/ringside/agent/log_tailer.h, run_spec_limits.h): a record
holds at most 1,024 metric names of 1 to 256 bytes; a run has at most 1,024 parameters, keys of 1
to 256 bytes and values of at most 4 KiB of JSON text.

Pure functions: thread-safe.
"""

import json
import math
import numbers
from json.encoder import encode_basestring_ascii
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

MAX_METRICS_PER_RECORD = 1024
MAX_METRIC_NAME_BYTES = 256
MAX_RUN_PARAMS = 1024
MAX_RUN_PARAM_KEY_BYTES = 256
MAX_RUN_PARAM_VALUE_BYTES = 4096
# Steps and epochs are JSON integers the agent reads as exact doubles: 0 .. 2^53.
MAX_STEP = 2**53
# A stdout record holds at most this many values; longer ones are split into several records of
# the same step, so that no line grows past a few KiB (Open MPI forwards the ranks' output in
# pieces, and a long line of one rank could be cut by another's).
STDOUT_VALUES_PER_LINE = 48


def _has_control_character(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def _utf8_size(text: str, what: str) -> int:
    """Bytes of ``text`` in UTF-8; ValueError naming ``what`` when it has no UTF-8 form (a lone
    surrogate), which the protocol's strings cannot carry."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text[:64]!r} is not valid Unicode text") from None


def check_step(name: str, value: Any) -> int:
    """``value`` as a step or epoch number: an int in [0, 2^53]; TypeError or ValueError naming
    ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__} {value!r}")
    value = int(value)
    if not 0 <= value <= MAX_STEP:
        raise ValueError(f"{name}={value} is out of range (0 to 2^53)")
    return value


def check_metrics(metrics: Mapping[str, Any]) -> Dict[str, float]:
    """The metrics of one record as name -> float, in the caller's order.

    ``metrics`` maps names (docs/metrics.md: ``train/loss``, ``test/accuracy``, ...) to numbers:
    anything ``float()`` accepts (int, float, a NumPy scalar, a one-element tensor). Non-finite
    values are kept (as NaN or infinity); the outputs write them as ``null`` or leave them out.
    Raises TypeError for a mapping that is not one, a name that is not a str or a value that is not
    a number; ValueError for an empty name, one over 256 bytes or with a control character, and
    for more than 1,024 names.
    """
    if not isinstance(metrics, Mapping):
        raise TypeError(f"metrics must be a dict of name -> number, not {type(metrics).__name__}")
    if len(metrics) > MAX_METRICS_PER_RECORD:
        raise ValueError(f"a record holds at most {MAX_METRICS_PER_RECORD} metrics, not "
                         f"{len(metrics)}: log them in several calls")
    values: Dict[str, float] = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise TypeError(f"metric names must be str, not {type(name).__name__} {name!r}")
        size = _utf8_size(name, "metric name")
        if size == 0 or size > MAX_METRIC_NAME_BYTES or _has_control_character(name):
            raise ValueError(f"metric name {name[:80]!r} must be 1 to {MAX_METRIC_NAME_BYTES} "
                             f"bytes of printable text, e.g. 'train/loss'")
        if isinstance(value, (str, bytes)):
            raise TypeError(f"metric {name!r} must be a number, not {type(value).__name__}")
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"metric {name!r} must be a number, not {type(value).__name__} "
                            f"{value!r}") from None
    return values


# JSON text of metric names as they were seen (a run logs the same few names at every step).
_NAME_JSON: Dict[str, str] = {}
_MAX_CACHED_NAMES = 65536


def _name_json(name: str) -> str:
    text = _NAME_JSON.get(name)
    if text is None:
        text = encode_basestring_ascii(name)
        if len(_NAME_JSON) < _MAX_CACHED_NAMES:
            _NAME_JSON[name] = text
    return text


def _number_json(value: float) -> str:
    # float's repr is the shortest text that reads back the same double: what json.dumps writes.
    return repr(value) if math.isfinite(value) else "null"


def metrics_lines(step: int, epoch: int, wall_time: float, rank: Optional[int],
                  values: Mapping[str, float]) -> List[str]:
    """The ``metrics`` record(s) of docs/metrics.md for these values, as JSON text lines without
    the newline: ``{"type":"metrics","step":S,"epoch":E,"time":T,"rank":R,"metrics":{...}}``,
    ``rank`` left out for global values (rank None). Non-finite values are written as ``null``.
    More than STDOUT_VALUES_PER_LINE values make several records of the same step. ``wall_time``
    is Unix time in seconds; values are floats.
    """
    head = f'{{"type":"metrics","step":{int(step)},"epoch":{int(epoch)},"time":{wall_time:.6f},'
    if rank is not None:
        head += f'"rank":{int(rank)},'
    head += '"metrics":{'
    items = [f"{_name_json(name)}:{_number_json(float(value))}" for name, value in values.items()]
    return [head + ",".join(items[begin:begin + STDOUT_VALUES_PER_LINE]) + "}}"
            for begin in range(0, max(len(items), 1), STDOUT_VALUES_PER_LINE)]


def config_line(params: Mapping[str, str]) -> str:
    """The ``config`` record of docs/metrics.md: ``{"type":"config","params":{KEY: VALUE}}`` with
    the flat dotted keys of :func:`flatten_params` and each value written as the JSON it holds."""
    parsed = {key: json.loads(value) for key, value in params.items()}
    return json.dumps({"type": "config", "params": parsed}, separators=(",", ":"),
                      ensure_ascii=False)


def _json_scalar(key: str, value: Any) -> str:
    """The JSON text of one parameter value (see flatten_params)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, numbers.Integral):
        return json.dumps(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return json.dumps(number) if math.isfinite(number) else "null"
    if isinstance(value, (list, tuple)):
        try:
            return json.dumps(list(value), separators=(",", ":"), allow_nan=False,
                              ensure_ascii=False, default=str)
        except ValueError:
            raise ValueError(f"parameter {key!r}: a list with a non-finite number cannot be "
                             f"written as JSON") from None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    # Paths, enums, dtypes and the like: their text.
    return json.dumps(str(value), ensure_ascii=False)


def _walk(prefix: str, params: Mapping[Any, Any], depth: int) -> Iterator[Tuple[str, Any]]:
    if depth > 32:
        raise ValueError(f"parameters nest deeper than 32 levels at {prefix!r}")
    for key, value in params.items():
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise TypeError(f"parameter keys must be str, not {type(key).__name__} {key!r}")
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and len(value) > 0:
            yield from _walk(path, value, depth + 1)
        elif isinstance(value, Mapping):
            yield path, "{}"
        else:
            yield path, _json_scalar(path, value)


def flatten_params(params: Mapping[Any, Any]) -> Dict[str, str]:
    """A nested dict of hyperparameters as flat dotted keys -> JSON text of each value.

    ``{"optimizer": {"lr": 0.1, "name": "sgd"}, "epochs": 5}`` gives ``{"optimizer.lr": "0.1",
    "optimizer.name": "\\"sgd\\"", "epochs": "5"}``. Values: None, bool, int and float (non-finite
    ones as ``null``) as JSON scalars; str quoted; a list or tuple as its JSON text; an empty dict
    as ``{}``; anything else (a path, an enum, a dtype) as its ``str()`` text in quotes. Raises
    TypeError for a non-mapping or a key that is not a str (ints are taken as their text), and
    ValueError past the bounds: more than 1,024 keys, a key empty, over 256 bytes or with a control
    character, or a value over 4 KiB of JSON.
    """
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict (nested dicts become dotted keys), not "
                        f"{type(params).__name__}")
    flat: Dict[str, str] = {}
    for key, text in _walk("", params, 0):
        check_param(key, text)
        flat[key] = text
        if len(flat) > MAX_RUN_PARAMS:
            raise ValueError(f"a run holds at most {MAX_RUN_PARAMS} parameters; these have more: "
                             f"leave out the ones you will not compare runs by")
    return flat


def check_param(key: str, text: str) -> None:
    """ValueError when a flat parameter is past the agent's bounds (see flatten_params)."""
    size = _utf8_size(key, "parameter key")
    if size == 0 or _has_control_character(key):
        raise ValueError(f"parameter key {key!r} must be non-empty printable text")
    if size > MAX_RUN_PARAM_KEY_BYTES:
        raise ValueError(f"parameter key {key[:64]!r}... is {size} bytes; at most "
                         f"{MAX_RUN_PARAM_KEY_BYTES}")
    value_size = _utf8_size(text, f"the value of parameter {key!r}:")
    if value_size > MAX_RUN_PARAM_VALUE_BYTES:
        raise ValueError(f"the value of parameter {key!r} is {value_size} bytes of JSON; at most "
                         f"{MAX_RUN_PARAM_VALUE_BYTES}: store a path or a summary instead")
