"""The device and configuration idioms of torch programs, against torch 2.13 on this machine
(which has no GPU): the same return values and the same error classes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import duograd as dg

pytestmark = pytest.mark.oracle


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return type(e)
    return None


def test_cuda_queries_answer_as_torch_without_a_gpu(torch) -> None:
    assert not torch.cuda.is_available(), "this test describes a machine without a GPU"
    assert dg.cuda.is_available() is torch.cuda.is_available() is False
    assert dg.cuda.device_count() == torch.cuda.device_count() == 0
    assert dg.cuda.is_initialized() == torch.cuda.is_initialized()
    dg.manual_seed(5)
    first = dg.rand(3).numpy()
    dg.manual_seed(5)
    assert dg.cuda.manual_seed(3) is None and torch.cuda.manual_seed(3) is None
    assert dg.cuda.manual_seed_all(3) is None and torch.cuda.manual_seed_all(3) is None
    np.testing.assert_array_equal(dg.rand(3).numpy(), first)  # the CPU generator is untouched
    device = "cuda" if dg.cuda.is_available() else "cpu"
    assert dg.zeros(2, device=device).device == dg.device("cpu")


@pytest.mark.parametrize("request_", ["t.cuda()", "t.cuda(0)", "t.cuda('cuda:0')", "t.to('cuda')", "t.to('cuda:0')", "t.to(0)",
                                      "t.to('cuda', lib.float32)", "t.to(device='cuda')",
                                      "m.cuda()", "m.cuda(0)", "m.to('cuda')", "m.to(device='cuda:0')",
                                      "m.to(0)"])
def test_asking_for_cuda_raises_torchs_error(torch, request_: str) -> None:
    def run(lib):
        t, m = lib.ones(2), lib.nn.Linear(2, 2)
        return eval(request_, {"t": t, "m": m, "lib": lib})
    expected = _error(lambda: run(torch))
    assert expected in (AssertionError, RuntimeError)  # RuntimeError for an int device index
    with pytest.raises(expected):
        run(dg)


def test_device_cuda_in_a_factory_raises_torchs_error(torch) -> None:
    assert _error(lambda: torch.zeros(2, device="cuda")) is AssertionError
    assert str(torch.device("cuda")) == "cuda"
    assert str(dg.device("cuda")) == "cuda"
    with pytest.raises(AssertionError):
        dg.zeros(2, device="cuda")


def test_cpu_moves_are_the_tensor_and_the_module_itself(torch) -> None:
    for lib in (torch, dg):
        t = lib.ones(3)
        assert t.cpu() is t and t.to("cpu") is t and t.to(lib.device("cpu")) is t and t.to(device="cpu") is t
        m = lib.nn.Linear(2, 2)
        assert m.cpu() is m and m.to("cpu") is m and m.to(lib.device("cpu")) is m


def test_a_tensors_device_and_layout_answers_are_torchs(torch) -> None:
    d, t = dg.ones(2), torch.ones(2)
    for name in ("is_cpu", "is_cuda", "is_ipu", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia",
                 "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu"):
        assert getattr(d, name) is getattr(t, name), name
    assert d.get_device() == t.get_device() == -1


def test_backend_flags_start_as_torchs_and_are_recorded(torch) -> None:
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(dg.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    assert dg.backends.cudnn.is_available() == torch.backends.cudnn.is_available() is False
    assert dg.backends.mps.is_available() == torch.backends.mps.is_available() is False
    assert dg.backends.mps.is_built() == torch.backends.mps.is_built()
    assert dg.backends.cuda.is_built() == torch.backends.cuda.is_built()
    assert dg.backends.mkldnn.enabled == torch.backends.mkldnn.enabled
    import duograd.backends.cudnn as cudnn  # programs import it so
    try:
        cudnn.benchmark, cudnn.deterministic = True, True
        assert dg.backends.cudnn.benchmark and dg.backends.cudnn.deterministic
        with dg.backends.cudnn.flags(enabled=False):
            assert dg.backends.cudnn.enabled is False
        assert dg.backends.cudnn.enabled is True
    finally:
        cudnn.benchmark, cudnn.deterministic = False, False
    for lib in (torch, dg):
        mm = lib.backends.cuda.matmul
        assert mm.allow_fp16_reduced_precision_reduction is True
        with pytest.raises(AttributeError):
            mm.no_such_flag = True
        with pytest.raises(AttributeError):
            mm.no_such_flag


def test_tf32_and_the_float32_matmul_precision_are_one_setting(torch) -> None:
    try:
        for lib in (torch, dg):
            assert lib.get_float32_matmul_precision() == "highest"
            assert lib.backends.cuda.matmul.allow_tf32 is False
            lib.set_float32_matmul_precision("high")
            assert lib.backends.cuda.matmul.allow_tf32 is True
            lib.set_float32_matmul_precision("medium")
            assert lib.get_float32_matmul_precision() == "medium"
            lib.set_float32_matmul_precision("highest")
            lib.backends.cuda.matmul.allow_tf32 = True
            assert lib.get_float32_matmul_precision() == "high"
            lib.backends.cuda.matmul.allow_tf32 = False
            assert lib.get_float32_matmul_precision() == "highest"
            with pytest.warns(UserWarning):
                lib.set_float32_matmul_precision("fastest")
            assert lib.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision("highest")
        dg.set_float32_matmul_precision("highest")


def test_deterministic_algorithms_switch(torch) -> None:
    try:
        for lib in (torch, dg):
            assert lib.are_deterministic_algorithms_enabled() is False
            lib.use_deterministic_algorithms(True, warn_only=True)
            assert lib.are_deterministic_algorithms_enabled() is True
            assert lib.is_deterministic_algorithms_warn_only_enabled() is True
            lib.use_deterministic_algorithms(False)
            assert lib.is_deterministic_algorithms_warn_only_enabled() is False
        assert _error(lambda: dg.use_deterministic_algorithms("yes")) is \
            _error(lambda: torch.use_deterministic_algorithms("yes")) is TypeError
    finally:
        torch.use_deterministic_algorithms(False)
        dg.use_deterministic_algorithms(False)


def test_thread_counts_are_recorded_and_checked_as_torch(torch) -> None:
    before_t, before_d = torch.get_num_threads(), dg.get_num_threads()
    try:
        for lib in (torch, dg):
            lib.set_num_threads(2)
            assert lib.get_num_threads() == 2
        for bad in (0, -1, 1.5):
            assert _error(lambda: dg.set_num_threads(bad)) is _error(lambda: torch.set_num_threads(bad)) \
                is RuntimeError, bad
        inter = dg.get_num_interop_threads()
        dg.set_num_interop_threads(3)  # torch allows it once, before any parallel work: not compared
        assert dg.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError):
            dg.set_num_interop_threads(0)
        dg.set_num_interop_threads(inter)
    finally:
        torch.set_num_threads(before_t)
        dg.set_num_threads(before_d)


def test_autocast_disabled_changes_nothing_and_the_unavailable_device_warns(torch) -> None:
    assert dg.autocast is dg.amp.autocast
    for lib in (torch, dg):
        a = lib.ones(2, 2, dtype=lib.float32)
        with lib.autocast("cpu", enabled=False):
            assert (a @ a).dtype == lib.float32
        with lib.amp.autocast(device_type="cpu", dtype=lib.bfloat16 if lib is torch else None, enabled=False):
            assert (a @ a).dtype == lib.float32

        @lib.autocast("cpu", enabled=False)
        def f(x):
            return x @ x
        assert f(a).dtype == lib.float32
        with pytest.warns(UserWarning):  # torch: "CUDA is not available ... Disabling autocast"
            with lib.autocast("cuda"):
                assert (a @ a).dtype == lib.float32
        with pytest.warns(UserWarning):  # CPU autocast takes bfloat16 and float16 only
            with lib.autocast("cpu", dtype=lib.float64):
                assert (a @ a).dtype == lib.float32
    assert _error(lambda: dg.autocast("gpu")) is _error(lambda: torch.autocast("gpu")) is RuntimeError


def test_autocast_enabled_on_the_cpu_raises_naming_the_missing_dtype(torch) -> None:
    """torch computes the matmul in bfloat16; duograd has no bfloat16 and says so."""
    a = torch.ones(2, 2)
    with torch.autocast("cpu"):
        assert (a @ a).dtype == torch.bfloat16
    with pytest.raises(NotImplementedError, match="bfloat16"):
        with dg.autocast("cpu"):
            pass
    with pytest.raises(NotImplementedError, match="float16"):
        with dg.amp.autocast("cpu", dtype="float16"):
            pass


def test_a_grad_scaler_without_a_gpu_is_disabled_as_torchs(torch) -> None:
    with pytest.warns(UserWarning):
        ts = torch.amp.GradScaler("cuda")
    with pytest.warns(UserWarning):
        ds = dg.amp.GradScaler("cuda")
    tl, dl = torch.tensor(2.0), dg.tensor(2.0)
    assert ts.scale(tl) is tl and ds.scale(dl) is dl
    assert ts.is_enabled() == ds.is_enabled() is False
    assert ts.get_scale() == ds.get_scale() == 1.0
    assert ts.state_dict() == ds.state_dict() == {}
    with pytest.warns(UserWarning):
        old = dg.cuda.amp.GradScaler()  # the older spelling, common in training scripts
    assert old.is_enabled() is False and old.scale(dl) is dl
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.cuda.amp.GradScaler(enabled=True).is_enabled() is False
    with pytest.warns(UserWarning):
        with dg.cuda.amp.autocast():
            assert (dg.ones(1, 1) @ dg.ones(1, 1)).dtype == dg.float64
    w = dg.tensor([1.0], requires_grad=True)
    opt = dg.optim.SGD([w], lr=0.5)
    (w * 2).sum().backward()
    ds.step(opt)
    ds.update()
    assert w.detach().numpy().tolist() == [0.0]


def test_inference_mode_is_no_grad_in_every_form(torch) -> None:
    for lib in (torch, dg):
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            y = x * 2
            assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        assert y.requires_grad is False and lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            assert lib.is_grad_enabled()
            assert (x * 2).requires_grad

        @lib.inference_mode()
        def called():
            return lib.is_grad_enabled()

        @lib.inference_mode
        def bare():
            return lib.is_grad_enabled()
        assert called() is False and bare() is False and lib.is_grad_enabled()


def test_compile_takes_torchs_keywords_and_a_module(torch) -> None:
    tm = torch.nn.Linear(3, 2).double()
    dm = dg.nn.Linear(3, 2)
    dm.load_state_dict(tm.state_dict())
    tc = torch.compile(tm, fullgraph=False, dynamic=None, backend="eager")
    dc = dg.compile(dm, fullgraph=False, dynamic=None, backend="eager", mode=None, options=None)
    assert dc._orig_mod is dm and tc._orig_mod is tm
    assert isinstance(dc, dg.nn.Module) and isinstance(tc, torch.nn.Module)
    assert list(dc.state_dict()) == list(tc.state_dict())
    x = np.arange(12.0).reshape(4, 3)
    eager = dm(dg.tensor(x)).detach().numpy()
    for _ in range(3):
        np.testing.assert_array_equal(dc(dg.tensor(x)).detach().numpy(), eager)
    assert dc.traces == 1
    np.testing.assert_allclose(eager, tm(torch.tensor(x)).detach().numpy(), rtol=1e-12)

    def f(a):
        return (a * a).sum()
    assert dg.compile(f, disable=True) is f and torch.compile(f, disable=True) is f
    fast = dg.compile(mode="max-autotune")(f)
    assert float(fast(dg.ones(3))) == 3.0 and fast.traces == 1
    assert isinstance(dg.compile(f), dg.Compiled)
    for kwargs in ({"mode": "fastest"}, {"mode": "default", "options": {}}):
        assert _error(lambda: dg.compile(f, **kwargs)) is _error(lambda: torch.compile(f, **kwargs)) \
            is RuntimeError, kwargs


def test_data_parallel_with_one_device_wraps_the_module_as_torchs(torch) -> None:
    tm, dm = torch.nn.Linear(3, 2).double(), dg.nn.Linear(3, 2)
    dm.load_state_dict(tm.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tp = torch.nn.DataParallel(tm)
    dp = dg.nn.DataParallel(dm)
    assert dp.module is dm and tp.module is tm
    assert list(dp.state_dict()) == list(tp.state_dict()) == ["module.weight", "module.bias"]
    x = np.ones((4, 3))
    np.testing.assert_allclose(dp(dg.tensor(x)).detach().numpy(), tp(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    assert dg.nn.parallel.DataParallel is dg.nn.DataParallel
    ddp = dg.nn.parallel.DistributedDataParallel(dm, find_unused_parameters=True)
    assert ddp.module is dm and list(ddp.state_dict()) == ["module.weight", "module.bias"]


def test_jit_script_and_trace_give_torchs_results(torch) -> None:
    def f(x):
        return x * 2 + 1

    x = np.arange(3.0)
    assert dg.jit.script(f) is f  # as torch with PYTORCH_JIT=0; a scripted f computes what f does
    np.testing.assert_array_equal(dg.jit.script(f)(dg.tensor(x)).numpy(), f(torch.tensor(x)).numpy())
    m = dg.nn.Linear(3, 1)
    assert dg.jit.trace(m, dg.ones(1, 3)) is m
    assert dg.jit.is_scripting() == torch.jit.is_scripting() is False
    assert dg.jit.is_tracing() == torch.jit.is_tracing() is False
    assert dg.onnx.is_in_onnx_export() == torch.onnx.is_in_onnx_export() is False
    assert dg.distributed.is_initialized() == torch.distributed.is_initialized() is False
    with pytest.raises(NotImplementedError, match="torch.jit.save"):
        dg.jit.save(m, "m.pt")
    with pytest.raises(NotImplementedError, match="torch.onnx.export"):
        dg.onnx.export(m, (dg.ones(1, 3),), "m.onnx")
    with pytest.raises(NotImplementedError, match="torch.distributed.init_process_group"):
        dg.distributed.init_process_group("gloo")
