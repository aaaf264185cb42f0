"""``dptopic.backends.dask``."""
import pytest

from dptopic.errors import DPTopicError


def test_a_cluster_without_workers_says_it_waits_before_it_waits():
    """Review 55: with no live worker the run showed only a progress bar standing still for 120 s."""
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    class NoWorkers:
        def scheduler_info(self):
            return {"workers": {}}

        def wait_for_workers(self, n, timeout=None):
            raise TimeoutError

    b = DaskBackend.__new__(DaskBackend)
    b.client = NoWorkers()
    with pytest.warns(UserWarning, match="no live worker yet: waiting up to 120 s"):
        with pytest.raises(DPTopicError, match="no live worker \\(waited 120 s\\)"):
            b._workers()


# ---------------------------------------------------------------- item 5: OpenDP missing on a Dask worker
class _Answer:
    def __init__(self, exc):
        self.exc = exc

    def result(self):
        raise self.exc


class _ActorWithoutOpenDP:
    def perturb_ndk(self, *a):
        from dptopic.mechanisms.laplace import OPENDP_MISSING

        return _Answer(DPTopicError(OPENDP_MISSING))    # what the worker raises, as the actor's future gives it back


def test_a_worker_without_opendp_is_named():
    # the driver has OpenDP; the error said only "pip install 'dptopic[secure]'", not that a worker lacks it
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    b = DaskBackend.__new__(DaskBackend)
    b._actors, b.where = [_ActorWithoutOpenDP()], ["tcp://10.0.0.7:40123"]
    with pytest.raises(DPTopicError) as e:
        b._call("perturb_ndk", {0: ()})
    msg = str(e.value)
    assert "Dask worker" in msg and "tcp://10.0.0.7:40123 lacks it" in msg and "on every worker" in msg


def test_another_worker_error_passes_through_unchanged():
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    class Other:
        def perturb_ndk(self, *a):
            return _Answer(DPTopicError("something else"))

    b = DaskBackend.__new__(DaskBackend)
    b._actors, b.where = [Other()], ["tcp://10.0.0.7:40123"]
    with pytest.raises(DPTopicError, match="^something else$"):
        b._call("perturb_ndk", {0: ()})
