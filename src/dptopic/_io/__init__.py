"""Atomic, pickle-free file I/O: JSON plus ``.npy`` (``allow_pickle=False``), in modules by purpose:
:mod:`.json_text` (JSON in and out), :mod:`.atomic` (atomic writes), :mod:`.output` (output folders and their
marker), :mod:`.bundles` (a model's folder of JSON and arrays) and :mod:`.exports` (CSV tables, figures). Every
name stays importable from ``dptopic._io``."""
from .atomic import _exchange, _old_name, _umask, atomic_write_bytes, atomic_write_json, warn_if_shared  # noqa: F401
from .bundles import (  # noqa: F401
    ARRAY_DIGESTS,
    MAX_META_BYTES,
    _file_sha256,
    _HashingReader,
    load_bundle,
    mismatched_arrays,
    save_bundle,
)
from .exports import save_fig, write_csv  # noqa: F401
from .json_text import (  # noqa: F401
    _NONFINITE,
    MAX_JSON_DEPTH,
    _jsonable,
    json_depth_exceeds,
    load_json,
    pairs_noting_repeats,
    plain_numbers,
    restore_nonfinite,
)
from .output import (  # noqa: F401
    _MARKER_NOTE,
    _PLAIN_NAME,
    _TEMPORARY_TAIL,
    MARKER_FORMAT,
    MARKER_LOCK,
    MARKER_VERSION,
    OUTPUT_LOCK_SUFFIX,
    OUTPUT_MARKER,
    STALE_TEMPORARY_AGE,
    _bundle_strangers,
    _check_writable,
    _claims,
    _holds_bundle,
    _internal,
    _listed,
    _marker_lock,
    _may_replace,
    _name_list,
    _out_path,
    _read_marker,
    _remove_stale_temporaries,
    _scan,
    _stale_temporaries,
    _temporary_target,
    _update_marker,
    check_output_dir,
    check_output_file,
    check_output_folder,
    claim_output,
    holding_output,
    mark_output_folder,
    marked_run,
    refuse_other_writer,
    release_output,
    unmark_failed_run,
)
