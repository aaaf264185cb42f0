"""Atomic, pickle-free file I/O: JSON plus ``.npy`` (``allow_pickle=False``), in modules by purpose:
:mod:`.json_text` (JSON in and out), :mod:`.atomic` (atomic writes), :mod:`.output` (output folders and their
marker), :mod:`.bundles` (a model's folder of JSON and arrays) and :mod:`.exports` (CSV tables, figures). Every
name stays importable from ``dptopic._io``."""
from .json_text import (  # noqa: F401
    plain_numbers, _jsonable, _NONFINITE, restore_nonfinite, MAX_JSON_DEPTH, json_depth_exceeds,
    pairs_noting_repeats, load_json)
from .atomic import (  # noqa: F401
    _umask, atomic_write_bytes, atomic_write_json, _exchange, _old_name)
from .output import (  # noqa: F401
    _PLAIN_NAME, _holds_bundle, _bundle_strangers, check_output_dir, OUTPUT_MARKER, MARKER_FORMAT, MARKER_VERSION,
    MARKER_LOCK, _MARKER_NOTE, STALE_TEMPORARY_AGE, _TEMPORARY_TAIL, _temporary_target, _internal, _scan,
    _read_marker, _listed, _claims, _stale_temporaries, _marker_lock, _name_list, check_output_folder,
    refuse_other_writer, mark_output_folder, _update_marker, unmark_failed_run, _out_path, _may_replace,
    check_output_file, _check_writable, _remove_stale_temporaries, OUTPUT_LOCK_SUFFIX, claim_output, release_output,
    holding_output, marked_run)
from .bundles import (  # noqa: F401
    ARRAY_DIGESTS, _file_sha256, mismatched_arrays, save_bundle, MAX_META_BYTES, load_bundle, _HashingReader)
from .exports import (  # noqa: F401
    write_csv, save_fig)
