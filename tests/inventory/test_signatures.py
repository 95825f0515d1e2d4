"""torch's parameters on duograd's names (duograd/torch_signatures.py, issue 28 item 3): each name
the signature layer gives torch's signature is called here with torch's keywords, torch's
positional order, ``out=`` and the factory keywords, in both libraries, and the results are
compared (values, dtypes, shapes). A value duograd cannot honour raises, naming it."""

from __future__ import annotations

import numpy as np
import pytest

import duograd as dg
from duograd import torch_signatures as ts

pytestmark = pytest.mark.oracle


def T(L, data, dtype="float64", grad=False):
    return L.tensor(data, dtype=getattr(L, dtype), requires_grad=grad)


def M(L):  # a 2x3 matrix
    return T(L, [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])


def V(L):
    return T(L, [0.3, -1.2, 2.5, 0.0])


def SPD(L):
    return T(L, [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def IMG(L):  # N, C, H, W
    return L.tensor(np.arange(2 * 4 * 4 * 4, dtype=np.float64).reshape(2, 4, 4, 4) / 10)


def _step(L, cls, **kw):
    """One step of an optimizer made with torch's keywords: the updated parameter."""
    p = T(L, [1.0, -2.0, 0.5], grad=True)
    opt = getattr(L.optim, cls)([p], **kw)
    for _ in range(2):
        opt.zero_grad()
        (p * p * T(L, [1.0, 2.0, 3.0])).sum().backward()
        opt.step()
    return p.detach()


def _sched(L, cls, **kw):
    p = T(L, [1.0], grad=True)
    opt = L.optim.SGD([p], lr=1.0)
    s = getattr(L.optim.lr_scheduler, cls)(opt, **kw)
    lrs = []
    for _ in range(3):
        opt.step()
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def _module(L, cls, *a, **kw):
    """A module made with torch's keywords: its parameters' shapes and dtypes, and its output."""
    m = getattr(L.nn, cls)(*a, **kw)
    return {n: (tuple(p.shape), str(p.dtype).replace("torch.", "")) for n, p in m.named_parameters()}


def _norm_out(L, cls, x, *a, **kw):
    """A normalisation module made with torch's keywords, after one forward: its parameters'
    shapes and dtypes, and its output."""
    m = getattr(L.nn, cls)(*a, **kw)
    y = m(x)
    return {n: (tuple(p.shape), str(p.dtype).replace("torch.", "")) for n, p in m.named_parameters()}, y


F_ = lambda L: L.nn.functional  # noqa: E731

# name -> a call of it with torch's keywords (or positional order), the same code in both libraries
CASES: dict[str, object] = {
    # ---------------------------------------------------------- torch.Tensor
    "torch.Tensor.addmm": lambda L: SPD(L).addmm(mat1=M(L).T, mat2=M(L), beta=0.5, alpha=2.0),
    "torch.Tensor.baddbmm": lambda L: M(L)[None].baddbmm(batch1=M(L)[None], batch2=M(L).T[None].matmul(M(L)[None]),
                                                         beta=0.5, alpha=2.0),
    "torch.Tensor.bmm": lambda L: M(L)[None].bmm(mat2=M(L).T[None]),
    "torch.Tensor.mm": lambda L: M(L).mm(mat2=M(L).T),
    "torch.Tensor.backward": None,  # test_backward_inputs
    "torch.Tensor.broadcast_to": lambda L: V(L).broadcast_to(size=(2, 4)),
    "torch.Tensor.cholesky_solve": lambda L: M(L).T.cholesky_solve(input2=L.linalg.cholesky(SPD(L)), upper=False),
    "torch.Tensor.contiguous": lambda L: M(L).contiguous(memory_format=L.contiguous_format),
    "torch.Tensor.copy_": lambda L: L.zeros(4, dtype=L.float64).copy_(other=V(L), non_blocking=False),
    "torch.Tensor.dot": lambda L: V(L).dot(tensor=V(L)),
    "torch.Tensor.dsplit": lambda L: IMG(L).dsplit(sections=2),
    "torch.Tensor.hsplit": lambda L: M(L).hsplit(indices=[1]),
    "torch.Tensor.vsplit": lambda L: M(L).vsplit(sections=2),
    "torch.Tensor.tensor_split": lambda L: V(L).tensor_split(indices=[1, 3], dim=0),
    "torch.Tensor.gather": lambda L: M(L).gather(dim=1, index=L.tensor([[0, 2], [1, 1]]), sparse_grad=False),
    "torch.Tensor.log_softmax": lambda L: T(L, [1.0, 2.0, 0.5], "float32").log_softmax(dim=0, dtype=L.float64),
    "torch.Tensor.softmax": lambda L: T(L, [1.0, 2.0, 0.5], "float32").softmax(0, L.float64),
    "torch.Tensor.random_": lambda L: L.zeros(50, dtype=L.float64).random_(**{"from": 3, "to": 5}).unique(),
    "torch.Tensor.resize_": lambda L: L.zeros(6, dtype=L.float64).resize_(size=(2, 3)).shape,
    "torch.Tensor.subtract": lambda L: V(L).subtract(V(L) * 3, alpha=2),
    "torch.Tensor.to": lambda L: V(L).to(tensor=T(L, [1], "float32"), non_blocking=False,
                                         memory_format=L.preserve_format),
    "torch.Tensor.type": lambda L: V(L).type(dtype=L.float32, non_blocking=False),
    "torch.Tensor.uniform_": lambda L: bool(((lambda u: (u >= 2) & (u < 3))(
        L.zeros(100, dtype=L.float64).uniform_(**{"from": 2.0, "to": 3.0}))).all()),
    "torch.Tensor.where": lambda L: V(L).where(condition=V(L) > 0, other=T(L, -9.0)),
    **{f"torch.Tensor.{n}": (lambda n: lambda L: getattr(V(L), n)(memory_format=L.preserve_format))(n)
       for n in ts._MEMORY_FORMAT_ONLY},
    # ---------------------------------------------------------- torch.*, out= only
    "torch.adaptive_avg_pool1d": lambda L: L.adaptive_avg_pool1d(input=IMG(L)[0], output_size=2),
    "torch.avg_pool1d": lambda L: L.avg_pool1d(input=IMG(L)[0], kernel_size=2, stride=1, padding=0,
                                               ceil_mode=False, count_include_pad=True),
    "torch.bernoulli": lambda L: L.bernoulli(input=T(L, [0.0, 1.0, 1.0]), generator=None),
    "torch.binary_cross_entropy_with_logits": lambda L: L.binary_cross_entropy_with_logits(
        input=V(L), target=T(L, [0.0, 1.0, 1.0, 0.0]), weight=None, pos_weight=None, reduction=1),
    "torch.bincount": lambda L: L.bincount(input=L.tensor([0, 2, 2, 3]), weights=None, minlength=5),
    "torch.cat": lambda L: L.cat(tensors=[V(L), V(L)], dim=0),
    "torch.concat": lambda L: L.concat(tensors=[M(L), M(L)], dim=1),
    "torch.concatenate": lambda L: L.concatenate(tensors=[M(L), M(L)], dim=-1),
    "torch.channel_shuffle": lambda L: L.channel_shuffle(input=IMG(L), groups=2),
    "torch.clamp_max": lambda L: L.clamp_max(input=V(L), max=1.0),
    "torch.clamp_min": lambda L: L.clamp_min(input=V(L), min=0.1),
    "torch.clone": lambda L: L.clone(input=V(L), memory_format=L.preserve_format),
    "torch.constant_pad_nd": lambda L: L.constant_pad_nd(input=M(L), pad=[1, 2], value=-1.0),
    "torch.conv_tbc": lambda L: L.conv_tbc(input=IMG(L)[0, :3], weight=IMG(L)[1, :2, :, :3] / 5,
                                           bias=T(L, [0.1, 0.2, 0.3]), pad=1),
    "torch.diagonal_scatter": lambda L: L.diagonal_scatter(input=L.zeros(3, 3, dtype=L.float64),
                                                           src=T(L, [1.0, 2.0]), offset=1, dim1=0, dim2=1),
    "torch.dist": lambda L: L.dist(input=V(L), other=V(L) * 2, p=3),
    "torch.embedding": lambda L: L.embedding(weight=M(L).T, indices=L.tensor([2, 0]), padding_idx=-1,
                                             scale_grad_by_freq=False, sparse=False),
    "torch.empty_strided": lambda L: L.empty_strided(size=(2, 3), stride=(3, 1), dtype=L.float64,
                                                     layout=L.strided, device="cpu", pin_memory=False).shape,
    "torch.hardshrink": lambda L: L.hardshrink(input=V(L), lambd=0.5),
    "torch.index_put": lambda L: L.index_put(input=V(L), indices=(L.tensor([0, 2]),), values=T(L, 7.0),
                                             accumulate=True),
    "torch.masked_scatter": lambda L: L.masked_scatter(input=V(L), mask=V(L) > 0, source=T(L, [9.0, 8.0, 7.0])),
    "torch.matrix_power": lambda L: L.matrix_power(input=SPD(L), n=3),
    "torch.multinomial": lambda L: L.multinomial(input=T(L, [0.0, 1.0, 0.0]), num_samples=2, replacement=True,
                                                 generator=None),
    "torch.pixel_shuffle": lambda L: L.pixel_shuffle(input=IMG(L), upscale_factor=2),
    "torch.pixel_unshuffle": lambda L: L.pixel_unshuffle(input=IMG(L), downscale_factor=2),
    "torch.poisson": lambda L: L.poisson(input=T(L, [0.0, 0.0]), generator=None),
    "torch.put": lambda L: L.put(input=V(L), index=L.tensor([1, 3]), source=T(L, [5.0, 6.0]), accumulate=False),
    "torch.renorm": lambda L: L.renorm(input=M(L), p=2, dim=0, maxnorm=1.0),
    "torch.rot90": lambda L: L.rot90(input=M(L), k=1, dims=[0, 1]),
    "torch.scalar_tensor": lambda L: L.scalar_tensor(s=2.5, dtype=L.float64, layout=L.strided, device="cpu",
                                                     pin_memory=False),
    "torch.select_scatter": lambda L: L.select_scatter(input=M(L), src=T(L, [7.0, 8.0, 9.0]), dim=0, index=1),
    "torch.slice_scatter": lambda L: L.slice_scatter(input=M(L), src=T(L, [[7.0], [8.0]]), dim=1, start=1,
                                                     end=2, step=1),
    "torch.stack": lambda L: L.stack(tensors=[V(L), V(L)], dim=1),
    "torch.take": lambda L: L.take(input=M(L), index=L.tensor([0, 5])),
    "torch.threshold": lambda L: L.threshold(input=V(L), threshold=0.2, value=-1.0),
    "torch.unsafe_split": lambda L: L.unsafe_split(input=V(L), split_size=3, dim=0),
    "torch.unsafe_split_with_sizes": lambda L: L.unsafe_split_with_sizes(input=V(L), split_sizes=[1, 3], dim=0),
    # ---------------------------------------------------------- torch.*, names
    "torch.bitwise_left_shift": lambda L: L.bitwise_left_shift(self=3, other=L.tensor([1, 2])),
    "torch.bitwise_right_shift": lambda L: L.bitwise_right_shift(input=L.tensor([8, 9]), other=L.tensor([1, 2])),
    "torch.bucketize": lambda L: L.bucketize(input=V(L), boundaries=T(L, [0.0, 1.0]), out_int32=True, right=True),
    "torch.float_power": lambda L: L.float_power(self=2, exponent=T(L, [1.0, 3.0])),
    "torch.pow": lambda L: L.pow(self=2.0, exponent=V(L)),
    "torch.remainder": lambda L: L.remainder(self=5.0, other=T(L, [2.0, 3.0])),
    "torch.xlogy": lambda L: L.xlogy(self=2.0, other=T(L, [1.0, 3.0])),
    "torch.where": lambda L: L.where(condition=V(L) > 0, input=V(L), other=T(L, 0.0)),
    "torch.searchsorted": lambda L: L.searchsorted(sorted_sequence=T(L, [0.0, 1.0, 2.0]), input=V(L),
                                                   right=False, side="left", sorter=None),
    "torch.special.xlog1py": lambda L: L.special.xlog1py(self=2.0, other=T(L, [1.0, 3.0])),
    "torch.special.xlogy": lambda L: L.special.xlogy(input=T(L, [2.0]), other=T(L, [1.0, 3.0])),
    "torch.special.zeta": lambda L: L.special.zeta(self=3.0, other=T(L, [1.0, 2.0])),
    "torch.addmm": lambda L: L.addmm(SPD(L)[:2, :2], M(L), M(L).T, beta=2, alpha=0.5),
    "torch.baddbmm": lambda L: L.baddbmm(input=SPD(L)[None], batch1=M(L).T[None], batch2=M(L)[None], beta=0),
    "torch.bmm": lambda L: L.bmm(input=M(L)[None], mat2=M(L).T[None]),
    "torch.mm": lambda L: L.mm(input=M(L), mat2=M(L).T),
    "torch.broadcast_to": lambda L: L.broadcast_to(input=V(L), size=(3, 4)),
    "torch.celu": lambda L: L.celu(input=V(L), alpha=0.5),
    "torch.selu": lambda L: L.selu(input=V(L)),
    "torch.cholesky_inverse": lambda L: L.cholesky_inverse(input=L.linalg.cholesky(SPD(L)), upper=False),
    "torch.cholesky_solve": lambda L: L.cholesky_solve(input=M(L).T, input2=L.linalg.cholesky(SPD(L)), upper=False),
    "torch.det": lambda L: L.det(input=SPD(L)),
    "torch.matrix_exp": lambda L: L.matrix_exp(input=SPD(L) / 4),
    "torch.dsplit": lambda L: L.dsplit(input=IMG(L), indices=[1, 3]),
    "torch.hsplit": lambda L: L.hsplit(input=M(L), sections=3),
    "torch.vsplit": lambda L: L.vsplit(input=M(L), indices=[1]),
    "torch.tensor_split": lambda L: L.tensor_split(input=V(L), sections=3, dim=0),
    "torch.functional.norm": lambda L: L.functional.norm(M(L), 2, 1, True, None, L.float64),
    "torch.norm": lambda L: L.norm(input=M(L), p="fro", dim=None, keepdim=False, out=None, dtype=None),
    "torch.i0_": lambda L: L.i0_(input=T(L, [0.5, 1.0])),
    "torch.sinc_": lambda L: L.sinc_(input=T(L, [0.5, 1.0])),
    "torch.isin": lambda L: L.isin(element=2, test_elements=L.tensor([1, 2]), assume_unique=False, invert=True),
    "torch.log_softmax": lambda L: L.log_softmax(input=T(L, [1.0, 2.0], "float32"), dim=0, dtype=L.float64),
    "torch.softmax": lambda L: L.softmax(T(L, [1.0, 2.0], "float32"), 0, L.float64),
    "torch.logspace": lambda L: L.logspace(start=0, end=2, steps=3, base=2.0, dtype=L.float64, layout=L.strided,
                                           device="cpu", pin_memory=False, requires_grad=False),
    "torch.range": lambda L: L.range(start=0, end=2, step=0.5, dtype=L.float64, layout=L.strided, device="cpu",
                                     requires_grad=False),
    "torch.masked_fill": lambda L: L.masked_fill(input=V(L), mask=V(L) > 0, value=-1.0),
    "torch.max": lambda L: (L.max(input=V(L), other=V(L).flip(0)), L.max(input=M(L), dim=1, keepdim=True)),
    "torch.min": lambda L: (L.min(input=V(L), other=V(L).flip(0)), L.min(M(L), 0, False)),
    "torch.ones": lambda L: L.ones(size=(2, 3), dtype=L.float64, layout=L.strided, device="cpu", pin_memory=False),
    "torch.zeros": lambda L: L.zeros(size=[3], dtype=L.float32, device=None),
    "torch.empty": lambda L: L.empty(size=(2, 3), dtype=L.float32, memory_format=L.contiguous_format).shape,
    "torch.rand": lambda L: L.rand(size=(2, 3), generator=None, dtype=L.float64).shape,
    "torch.randn": lambda L: L.randn(size=(4,), dtype=L.float32, requires_grad=True).requires_grad,
    "torch.randint": lambda L: (L.randint(low=3, high=4, size=(3,)), L.randint(high=1, size=(2,), dtype=L.int32),
                                L.randint(2, 3, (2,))),
    "torch.randint_like": lambda L: L.randint_like(input=V(L), low=5, high=6, dtype=L.float64),
    "torch.reshape": lambda L: L.reshape(input=M(L), shape=(3, 2)),
    "torch.result_type": lambda L: (L.result_type(tensor=T(L, [1.0], "float32"), other=2.5),
                                    L.result_type(scalar=2.5, tensor=T(L, [1.0], "float32")),
                                    L.result_type(scalar1=2, scalar2=3)),
    "torch.rsub": lambda L: L.rsub(V(L), 2.0, 3),
    "torch.subtract": lambda L: L.subtract(input=V(L), other=1.0, alpha=2),
    "torch.set_num_interop_threads": None,  # a process-wide setting: test_thread_settings
    "torch.set_num_threads": None,
    "torch.triangular_solve": lambda L: L.triangular_solve(input=M(L).T, A=L.linalg.cholesky(SPD(L)), upper=False),
    "torch.true_divide": lambda L: L.true_divide(input=V(L), other=2),
    # ---------------------------------------------------------- torch.autograd, torch.func
    "torch.autograd.backward": None,  # test_backward_inputs
    "torch.autograd.gradcheck": lambda L: L.autograd.gradcheck(func=lambda x: (x * x).sum(), inputs=(V(L).requires_grad_(),),
                                                           eps=1e-6, atol=1e-5, raise_exception=True,
                                                           nondet_tol=0.0, fast_mode=False),
    "torch.autograd.gradgradcheck": lambda L: L.autograd.gradgradcheck(func=lambda x: (x * x * x).sum(),
                                                                   inputs=(V(L).requires_grad_(),),
                                                                   grad_outputs=None, raise_exception=True),
    "torch.func.grad": lambda L: L.func.grad(func=lambda x: ((x * x).sum(), x.sum()), argnums=0,
                                             has_aux=True)(V(L)),
    "torch.func.hessian": lambda L: L.func.hessian(func=lambda x: (x * x * x).sum(), argnums=0)(V(L)),
    "torch.func.jacfwd": lambda L: L.func.jacfwd(func=lambda x: x * x, argnums=0, has_aux=False)(V(L)),
    "torch.func.jacrev": lambda L: L.func.jacrev(func=lambda x: x.sin(), argnums=0, has_aux=False,
                                                 chunk_size=None, _preallocate_and_copy=False)(V(L)),
    "torch.func.jvp": lambda L: L.func.jvp(func=lambda x: (x * x, x.sum()), primals=(V(L),), tangents=(V(L),),
                                           strict=False, has_aux=True),
    "torch.func.vjp": lambda L: (lambda r: (r[0], r[1](V(L)), r[2]))(
        L.func.vjp(lambda x: (x * 3, x.sum()), V(L), has_aux=True)),
    # ---------------------------------------------------------- torch.linalg, torch.special
    "torch.linalg.cholesky": lambda L: L.linalg.cholesky(input=SPD(L), upper=True),
    "torch.linalg.cholesky_ex": lambda L: L.linalg.cholesky_ex(input=SPD(L), upper=False, check_errors=False),
    "torch.linalg.cond": lambda L: L.linalg.cond(input=SPD(L), p=None),
    "torch.linalg.eigh": lambda L: L.linalg.eigh(input=SPD(L), UPLO="L").eigenvalues,
    "torch.linalg.eigvalsh": lambda L: L.linalg.eigvalsh(input=SPD(L), UPLO="U"),
    "torch.linalg.matrix_exp": lambda L: L.linalg.matrix_exp(input=SPD(L) / 4),
    "torch.linalg.matrix_norm": lambda L: L.linalg.matrix_norm(input=M(L), ord="fro", dim=(-2, -1), keepdim=True),
    "torch.linalg.matrix_power": lambda L: L.linalg.matrix_power(input=SPD(L), n=2),
    "torch.linalg.matrix_rank": lambda L: (L.linalg.matrix_rank(input=M(L), tol=1e-3, hermitian=False),
                                           L.linalg.matrix_rank(SPD(L), atol=0.5, rtol=0.0)),
    "torch.linalg.norm": lambda L: L.linalg.norm(input=M(L), ord=None, dim=1, keepdim=False),
    "torch.linalg.pinv": lambda L: (L.linalg.pinv(input=M(L), rcond=1e-10, hermitian=False),
                                    L.linalg.pinv(SPD(L), 1e-8, True)),
    "torch.linalg.solve_triangular": lambda L: L.linalg.solve_triangular(
        input=L.linalg.cholesky(SPD(L)), B=M(L).T, upper=False, left=True, unitriangular=False),
    "torch.linalg.tensorinv": lambda L: L.linalg.tensorinv(input=SPD(L), ind=1),
    "torch.linalg.tensorsolve": lambda L: L.linalg.tensorsolve(input=SPD(L), other=V(L)[:3], dims=None),
    "torch.linalg.vector_norm": lambda L: L.linalg.vector_norm(input=M(L), ord=3, dim=0, keepdim=False,
                                                               dtype=None),
    "torch.special.softmax": lambda L: L.special.softmax(T(L, [1.0, 2.0], "float32"), 0, L.float64),
    **{f"torch.special.{n}": (lambda n: lambda L: getattr(L.special, n)(x=T(L, [0.3, 1.2])))(n)
       for n in ts._SPECIAL_X},
    **{f"torch.special.{n}": (lambda n: lambda L: getattr(L.special, n)(x=T(L, [0.3, 0.7]), n=3))(n)
       for n in ts._SPECIAL_XN},
    # ---------------------------------------------------------- torch.nn.functional
    **{f"torch.nn.functional.{n}": (lambda n: lambda L: getattr(F_(L), n)(input=V(L), inplace=False))(n)
       for n in "hardsigmoid hardswish mish relu6 relu selu silu".split()},
    **{f"torch.nn.functional.{n}": (lambda n: lambda L: getattr(F_(L), n)(input=V(L)))(n)
       for n in "logsigmoid softsign".split()},
    "torch.nn.functional.celu": lambda L: F_(L).celu(input=V(L), alpha=2.0, inplace=False),
    "torch.nn.functional.elu": lambda L: F_(L).elu(input=V(L), alpha=2.0, inplace=False),
    "torch.nn.functional.gelu": lambda L: F_(L).gelu(input=V(L), approximate="tanh"),
    "torch.nn.functional.glu": lambda L: F_(L).glu(input=V(L), dim=-1),
    "torch.nn.functional.hardtanh": lambda L: F_(L).hardtanh(input=V(L), min_val=-0.5, max_val=0.5, inplace=False),
    "torch.nn.functional.leaky_relu": lambda L: F_(L).leaky_relu(input=V(L), negative_slope=0.2, inplace=False),
    "torch.nn.functional.prelu": lambda L: F_(L).prelu(input=V(L), weight=T(L, [0.25])),
    "torch.nn.functional.softplus": lambda L: F_(L).softplus(input=V(L), beta=2.0, threshold=1.0),
    "torch.nn.functional.log_softmax": lambda L: F_(L).log_softmax(input=T(L, [1.0, 3.0], "float32"), dim=0,
                                                                   _stacklevel=5, dtype=L.float64),
    "torch.nn.functional.softmax": lambda L: F_(L).softmax(T(L, [1.0, 3.0], "float32"), 0, 3, L.float64),
    "torch.nn.functional.softmin": lambda L: F_(L).softmin(input=M(L), dim=1, dtype=L.float32),
    "torch.nn.functional.one_hot": lambda L: F_(L).one_hot(input=L.tensor([0, 2]), num_classes=4),
    "torch.nn.functional.l1_loss": lambda L: (
        F_(L).l1_loss(input=V(L), target=V(L).flip(0), reduction="mean", weight=T(L, [1.0, 2.0, 0.0, 1.0])),
        F_(L).l1_loss(V(L), V(L).flip(0), None, False),
        F_(L).l1_loss(input=V(L), target=V(L).flip(0), size_average=False)),
    "torch.nn.functional.mse_loss": lambda L: (
        F_(L).mse_loss(input=V(L), target=V(L).flip(0), reduction="sum", weight=T(L, [1.0, 2.0, 0.0, 1.0])),
        F_(L).mse_loss(V(L), V(L).flip(0), True, True, "none"),
        F_(L).mse_loss(input=V(L), target=V(L).flip(0), reduce=False)),
    "torch.nn.functional.rrelu_": lambda L: F_(L).rrelu_(input=V(L), lower=0.1, upper=0.3, training=False,
                                                         generator=None),
    **{f"torch.nn.functional.{n}": (lambda n, a: lambda L: getattr(F_(L), n)(input=IMG(L), **a))(n, a)
       for n, a in [("avg_pool2d", {"kernel_size": 2, "stride": 1,
                    "padding": 0, "ceil_mode": False, "count_include_pad": True, "divisor_override": None}),
                    ("channel_shuffle", {"groups": 2}), ("hardshrink", {"lambd": 0.5}),
                    ("pixel_shuffle", {"upscale_factor": 2}), ("pixel_unshuffle", {"downscale_factor": 2}),
                    ("softshrink", {"lambd": 0.5})]},
    "torch.nn.functional.adaptive_avg_pool1d": lambda L: F_(L).adaptive_avg_pool1d(input=IMG(L)[0], output_size=2),
    "torch.nn.functional.avg_pool1d": lambda L: F_(L).avg_pool1d(input=IMG(L)[0], kernel_size=2, stride=2),
    "torch.nn.functional.avg_pool3d": lambda L: F_(L).avg_pool3d(input=IMG(L), kernel_size=2, stride=2,
                                                                 padding=0, divisor_override=3),
    "torch.nn.functional.conv_tbc": lambda L: F_(L).conv_tbc(input=IMG(L)[0, :3], weight=IMG(L)[1, :2, :, :3] / 5,
                                                             bias=T(L, [0.1, 0.2, 0.3]), pad=0),
    "torch.nn.functional.linear": lambda L: F_(L).linear(input=M(L), weight=M(L), bias=T(L, [1.0, 2.0])),
    # ---------------------------------------------------------- torch.nn modules
    **{f"torch.nn.{n}": (lambda n: lambda L: _norm_out(L, n, IMG(L)[:, :, :, 0].float(), 4, 1e-3, 0.2, True, True, "cpu",
                                                       L.float32, bias=False))(n)
       for n in "BatchNorm1d InstanceNorm1d".split()},
    **{f"torch.nn.{n}": (lambda n: lambda L: _norm_out(L, n, IMG(L), num_features=4, affine=True,
                                                       device="cpu", dtype=L.float64, bias=False))(n)
       for n in "BatchNorm2d InstanceNorm2d".split()},
    **{f"torch.nn.{n}": (lambda n: lambda L: _norm_out(L, n, IMG(L)[None], num_features=2, affine=True,
                                                       track_running_stats=False, dtype=L.float64))(n)
       for n in "BatchNorm3d InstanceNorm3d".split()},
    **{f"torch.nn.{n}": (lambda n: lambda L: _norm_out(L, n, IMG(L).float() if "2d" in n else (
        IMG(L)[:, :, :, 0].float() if "1d" in n else IMG(L)[None].float()), eps=1e-3, momentum=0.2, affine=True,
        device="cpu", dtype=L.float32, bias=False)[1])(n)
       for n in "LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d LazyInstanceNorm1d LazyInstanceNorm2d "
                "LazyInstanceNorm3d".split()},
    "torch.nn.SyncBatchNorm": lambda L: _module(L, "SyncBatchNorm", 3, 1e-5, 0.1, True, True, None, "cpu",
                                                L.float64, bias=False),
    "torch.nn.GroupNorm": lambda L: _norm_out(L, "GroupNorm", IMG(L), 2, 4, 1e-5, True, "cpu", L.float64,
                                              bias=False),
    "torch.nn.LayerNorm": lambda L: _norm_out(L, "LayerNorm", IMG(L), normalized_shape=[4], eps=1e-5,
                                              elementwise_affine=True, bias=False, device="cpu", dtype=L.float64),
    "torch.nn.Linear": lambda L: _module(L, "Linear", 3, 2, False, "cpu", L.float32),
    "torch.nn.Embedding": lambda L: _module(L, "Embedding", num_embeddings=5, embedding_dim=2, padding_idx=0,
                                            device="cpu", dtype=L.float64),
    **{f"torch.nn.ConstantPad{d}d": (lambda d: lambda L: getattr(L.nn, f"ConstantPad{d}d")(padding=1, value=-2.0)(
        IMG(L)[0] if d < 3 else IMG(L)))(d) for d in (1, 2, 3)},
    "torch.nn.Dropout": lambda L: (lambda x: (L.nn.Dropout(p=0.0, inplace=True)(x) is x, x))(V(L)),
    "torch.nn.ReLU": lambda L: (lambda x: (L.nn.ReLU(inplace=True)(x) is x, x, L.nn.ReLU(False)(V(L))))(V(L)),
    "torch.nn.MSELoss": lambda L: (L.nn.MSELoss(size_average=False)(V(L), V(L) * 2),
                                   L.nn.MSELoss(None, False)(V(L), V(L) * 2),
                                   L.nn.MSELoss(reduction="sum")(V(L), V(L) * 2)),
    # ---------------------------------------------------------- torch.optim
    "torch.optim.Adagrad": lambda L: _step(L, "Adagrad", lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                           initial_accumulator_value=0.1, eps=1e-10, foreach=None, maximize=False,
                                           differentiable=False, fused=None),
    "torch.optim.Adam": lambda L: _step(L, "Adam", lr=0.1, betas=(0.8, 0.9), eps=1e-8, weight_decay=0.1,
                                        amsgrad=False, foreach=False, maximize=True, capturable=False,
                                        differentiable=False, fused=None, decoupled_weight_decay=False),
    "torch.optim.AdamW": lambda L: _step(L, "AdamW", lr=0.1, betas=(0.8, 0.9), eps=1e-8, weight_decay=0.1,
                                         amsgrad=False, maximize=False, foreach=True, capturable=False),
    "torch.optim.Adamax": lambda L: _step(L, "Adamax", lr=0.1, betas=(0.8, 0.9), eps=1e-8, weight_decay=0.0,
                                          foreach=None, maximize=False, differentiable=False, capturable=False),
    "torch.optim.NAdam": lambda L: _step(L, "NAdam", lr=0.1, betas=(0.8, 0.9), eps=1e-8, weight_decay=0.0,
                                         momentum_decay=0.004, decoupled_weight_decay=False, foreach=None,
                                         maximize=False, capturable=False, differentiable=False),
    "torch.optim.RMSprop": lambda L: _step(L, "RMSprop", lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.0,
                                           momentum=0.5, centered=True, capturable=False, foreach=None,
                                           maximize=False, differentiable=False),
    "torch.optim.SGD": lambda L: _step(L, "SGD", lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0,
                                       nesterov=True, maximize=False, foreach=None, differentiable=False, fused=None),
    "torch.optim.lr_scheduler.CosineAnnealingLR": lambda L: _sched(L, "CosineAnnealingLR", T_max=4, eta_min=0.1,
                                                                   last_epoch=-1),
    "torch.optim.lr_scheduler.ExponentialLR": lambda L: _sched(L, "ExponentialLR", gamma=0.5, last_epoch=-1),
    "torch.optim.lr_scheduler.LinearLR": lambda L: _sched(L, "LinearLR", start_factor=0.5, end_factor=1.0,
                                                          total_iters=2, last_epoch=-1),
    "torch.optim.lr_scheduler.StepLR": lambda L: _sched(L, "StepLR", step_size=2, gamma=0.5, last_epoch=-1),
}


def _same(a, b, where="result"):
    """torch's ``a`` and duograd's ``b``: the same values, dtypes and shapes, recursively."""
    import torch
    if isinstance(a, torch.Tensor):
        assert isinstance(b, dg.Tensor), f"{where}: duograd gave {type(b).__name__}, torch a Tensor"
        an, bn = a.detach().numpy(), b.detach().numpy()
        assert an.shape == bn.shape, f"{where}: shape {bn.shape}, torch's {an.shape}"
        assert an.dtype == bn.dtype, f"{where}: dtype {bn.dtype}, torch's {an.dtype}"
        tol = dict(rtol=1e-6, atol=1e-7) if an.dtype != np.float32 else dict(rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(bn, an, err_msg=where, **tol)
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"{where}: {b!r} against torch's {a!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{where}: keys {sorted(b)} against torch's {sorted(a)}"
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, torch.dtype):
        assert str(a).replace("torch.", "") == str(b).replace("torch.", ""), f"{where}: {b} against {a}"
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-6), f"{where}: {b} against torch's {a}"
    elif isinstance(a, torch.Size):
        assert tuple(a) == tuple(b), where
    else:
        assert a == b, f"{where}: {b!r} against torch's {a!r}"


_CALLED = sorted(k for k, v in CASES.items() if v is not None)


def test_every_name_of_the_table_has_a_case() -> None:
    missing = sorted(set(ts.SPECS) - set(CASES))
    assert not missing, f"no case in CASES for: {missing}"


@pytest.mark.parametrize("name", _CALLED)
def test_called_with_torchs_keywords_as_torch(name, torch) -> None:
    case = CASES[name]
    torch.manual_seed(0)
    dg.manual_seed(0)
    _same(case(torch), case(dg), name)


# ---------------------------------------------------------------- out=, as torch writes it

_OUT_CASES = sorted({  # the names whose torch signature has out= that the layer gives them
    *(f"torch.{n}" for n in ts._OUT_ONLY), *(f"torch.nn.functional.{n}" for n in ts._F_OUT_ONLY),
    *(f"torch.special.{n}" for n in ts._SPECIAL_X + ts._SPECIAL_XN),
    "torch.linalg.matrix_norm", "torch.linalg.norm", "torch.linalg.vector_norm", "torch.log_softmax",
    "torch.softmax", "torch.nn.functional.gelu", "torch.nn.functional.softplus", "torch.isin",
})


@pytest.mark.parametrize("name", _OUT_CASES)
def test_out_is_written_and_returned(name, torch) -> None:
    """Each case again, with ``out=`` an empty tensor of the result's dtype: torch's result is
    written into it and it is returned, in both libraries."""
    case = CASES[name]
    ns, _, short = name.rpartition(".")
    for L in (torch, dg):
        L.manual_seed(0)
        ref = case(L)
        if isinstance(ref, tuple):
            ref = ref[0]
        out = L.empty(0, dtype=ref.dtype)
        mod = {"torch": L, "torch.nn.functional": L.nn.functional, "torch.special": L.special,
               "torch.linalg": L.linalg}[ns]
        original = getattr(mod, short)

        def with_out(*a, _f=original, **k):
            return _f(*a, out=out, **k)
        setattr(mod, short, with_out)
        try:
            L.manual_seed(0)
            got = case(L)
        finally:
            setattr(mod, short, original)
        got = got[0] if isinstance(got, tuple) else got
        assert got is out, f"{name}: out= is not the tensor returned"
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
        assert out.dtype == ref.dtype


def test_out_of_the_wrong_shape_raises_and_requires_grad_is_refused(torch) -> None:
    x = T(dg, [1.0, 2.0], grad=True)
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        dg.cat(tensors=[x, x], out=dg.empty(0, dtype=dg.float64))
    o = dg.empty(0, dtype=dg.float64)
    assert dg.cat(tensors=[T(dg, [1.0]), T(dg, [2.0])], out=o) is o and o.shape == (2,)


# ---------------------------------------------------------------- refused by name

_REFUSED = [
    (lambda: dg.mm(M(dg), M(dg).T, out_dtype=dg.float32), "out_dtype"),
    (lambda: M(dg).contiguous(memory_format="torch.channels_last"), "memory_format"),
    (lambda: M(dg).gather(1, dg.tensor([[0], [1]]), sparse_grad=True), "sparse_grad"),
    (lambda: dg.optim.Adam([T(dg, [1.0], grad=True)], amsgrad=True), "amsgrad"),
    (lambda: dg.optim.SGD([T(dg, [1.0], grad=True)], fused=True), "fused"),
    (lambda: dg.optim.Adam([T(dg, [1.0], grad=True)], differentiable=True), "differentiable"),
    (lambda: dg.optim.lr_scheduler.StepLR(dg.optim.SGD([T(dg, [1.0], grad=True)]), 2, last_epoch=3), "last_epoch"),
    (lambda: dg.autograd.gradcheck(lambda x: x.sum(), (V(dg).requires_grad_(),), check_forward_ad=True),
     "check_forward_ad"),
    (lambda: dg.nn.functional.rrelu_(V(dg), generator=object()), "generator"),
]


@pytest.mark.parametrize("i", range(len(_REFUSED)))
def test_a_value_that_cannot_be_honoured_is_refused_by_name(i) -> None:
    call, name = _REFUSED[i]
    with pytest.raises(NotImplementedError, match=name):
        call()


def test_factory_keywords_refuse_what_the_cpu_has_not(torch) -> None:
    with pytest.raises(RuntimeError, match="pin_memory"):
        dg.logspace(0, 1, 3, pin_memory=True)
    with pytest.raises(AssertionError, match="CUDA"):
        dg.nn.Linear(2, 3, device="cuda")
    with pytest.raises(AssertionError, match="CUDA"):
        torch.nn.Linear(2, 3, device="cuda")


def test_backward_inputs(torch) -> None:
    """``backward(inputs=...)`` accumulates into those tensors only, as torch."""
    def run(L, method):
        a, b = T(L, [1.0, 2.0], grad=True), T(L, [3.0, -1.0], grad=True)
        y = (a * a * b).sum()
        if method:
            y.backward(gradient=None, retain_graph=True, create_graph=False, inputs=[b])
            y.backward(inputs=b)
        else:
            L.autograd.backward(tensors=[y], grad_tensors=None, inputs=[a])
        return a.grad, b.grad
    for method in (True, False):
        ta, tb = run(torch, method)
        da, db = run(dg, method)
        for t, d in ((ta, da), (tb, db)):
            assert (t is None) == (d is None)
            if t is not None:
                np.testing.assert_allclose(d.numpy(), t.numpy())


def test_gradcheck_raise_exception_false_returns_false(torch) -> None:
    class Bad(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    x = T(dg, [1.0, 2.0], grad=True)
    assert dg.autograd.gradcheck(func=Bad.apply, inputs=(x,), raise_exception=False) is False
    with pytest.raises(Exception):
        dg.autograd.gradcheck(Bad.apply, (x,))


def test_thread_settings(torch) -> None:
    before = dg.get_num_threads()
    dg.set_num_threads(int=2)
    assert dg.get_num_threads() == 2
    dg.set_num_threads(before)


def test_the_layer_keeps_the_fast_path_and_positional_calls(torch) -> None:
    """Positional calls in torch's order reach the function unchanged; torch's keywords are moved."""
    x = V(dg)
    np.testing.assert_allclose(dg.nn.functional.relu(x).numpy(), np.maximum(x.numpy(), 0))
    np.testing.assert_allclose(dg.nn.functional.softmax(x, 0).numpy(),
                               torch.softmax(torch.tensor(x.numpy()), 0).numpy())
    with pytest.raises(TypeError, match="multiple values"):
        dg.nn.functional.relu(x, input=x)


@pytest.mark.parametrize("name", ["flatten", "reshape", "zeros_like", "transpose", "isnan", "split"])
def test_no_out_where_torch_has_none(name, torch) -> None:
    """The layer gives ``out=`` only where torch's signature has it: elsewhere both raise TypeError."""
    args = {"flatten": (), "reshape": ((4,),), "zeros_like": (), "transpose": (0, 1), "isnan": (),
            "split": (1,)}[name]
    for L in (torch, dg):
        with pytest.raises(TypeError):
            getattr(L, name)(L.ones(2, 2), *args, out=L.empty(0))
