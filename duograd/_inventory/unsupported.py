"""Why duograd lacks a torch name: the decisions the inventory test holds us to.

Every name of ``torch_names.json`` that duograd does not build gets a reason from this file,
and calling it raises ``NotImplementedError`` with that reason (``stubs.py``). There are two
kinds of reason:

- ``INTERNAL``: the name is an internal of torch that means nothing in duograd: storage
  objects and raw memory, quantization, sparse and nested layouts, other devices and their
  kernels (CUDA, cuDNN, MKL-DNN, MPS, XPU ...), CUDA streams, the TorchScript compiler's C++
  types, multi-process communication, the sub-byte and float8 storage formats. The table
  leaves these out of the percentage and counts them apart.
- ``NOT_BUILT``: a name duograd could have and does not yet. ``NOT_BUILT_YET`` lists them
  one by one, per namespace (``python -m duograd._inventory --update-unsupported`` rewrites
  that list from what is built now); a name torch adds that is in neither list fails the
  inventory test, so a new torch name is always decided.

``reason(namespace, name)`` is the one question everyone asks.
"""

from __future__ import annotations

import re

INTERNAL = "internal"
NOT_BUILT = "not built yet"

# (namespace pattern, name pattern, what to say), the first match wins. Patterns are
# re.fullmatch'ed; namespaces are torch's ("torch.Tensor", "torch", "torch.nn", ...).
_STORAGE = "storage objects and raw memory: duograd's tensors are NumPy arrays, without a torch storage"
_QUANT = "quantization: duograd computes in float and integer dtypes only"
_SPARSE = "sparse layouts: duograd's tensors are dense (strided) only"
_NESTED = "nested/jagged tensors: duograd's tensors are dense (strided) only"
_DEVICE = "another device or its kernels (CUDA, cuDNN, MKL-DNN, MIOpen, MPS, XPU, ...): duograd runs on the CPU"
_JIT = "TorchScript's compiler and its C++ types: duograd has no TorchScript"
_DIST = "multi-process communication: duograd runs in one process"
_FORMAT = "a sub-byte, float8 or quantized storage format: NumPy has no such dtype"
_CPP = "torch's C++/dispatcher infrastructure (operator registration, dispatch keys, extensions)"
_STREAM = "CUDA streams and events: duograd runs on the CPU, synchronously"

RULES: list[tuple[str, str, str]] = [
    # --- whole namespaces
    (r"torch\.cuda", r".*", _DEVICE),
    (r"torch\.distributed", r".*", _DIST),
    (r"torch\.backends", r"(cusparselt|kleidiai|miopen|nnpack|quantized|python_native|mha)", _DEVICE),
    (r"torch\.jit", r"(CompilationUnit|ScriptFunction|ScriptModule|RecursiveScriptModule|RecursiveScriptClass|"
                    r"ScriptWarning|TopLevelTracedModule|TracedModule|CompilationUnit|Attribute|Error|"
                    r"fork|wait|freeze|optimize_for_inference|run_frozen_optimizations|enable_onednn_fusion|"
                    r"onednn_fusion_enabled|set_fusion_strategy|fuser|strict_fusion|annotate|isinstance|"
                    r"interface|Future|export_opnames|set_module|last_executed_optimized_graph|"
                    r"script_method|script_if_tracing|trace_module|load|save|frontend|mobile|"
                    r"supported_ops|unsupported_tensor_ops|.*_jit_.*)", _JIT),
    (r"torch\.nn\.parallel", r"(comm|parallel_apply|replicate|scatter|gather|data_parallel|"
                             r"scatter_gather|parallel_apply)", _DIST),
    # --- Tensor
    (r"torch\.Tensor", r"(storage|untyped_storage|storage_offset|storage_type|share_memory_|is_shared|"
                       r"pin_memory|is_pinned|data_ptr|set_)", _STORAGE),
    (r"torch\.Tensor", r"(q_.*|qscheme|int_repr|dequantize|is_quantized)", _QUANT),
    (r"torch\.Tensor", r"(.*sparse.*|to_dense|coalesce|is_coalesced|indices|values|crow_indices|col_indices|"
                       r"ccol_indices|row_indices|dense_dim|smm|sspaddmm|_nnz|nnz)", _SPARSE),
    (r"torch\.Tensor", r"(is_nested|.*nested.*)", _NESTED),
    (r"torch\.Tensor", r"(record_stream)", _STREAM),
    (r"torch\.Tensor", r"(.*mkldnn.*|is_(ipu|maia|meta|mps|mtia|vulkan|xla|xpu|hpu)|ipu|xpu|mtia|hpu|mps|"
                       r"to_padded_tensor)", _DEVICE),
    # --- torch
    (r"torch", r".*Storage|StorageBase|TypedStorage|UntypedStorage|storage|"
               r"DeserializationStorageContext|SerializationStorageContext|is_storage", _STORAGE),
    (r"torch", r"(q.*int.*|quint.*|qscheme|per_(tensor|channel)_.*|quantize.*|quantized_.*|dequantize|"
               r"fake_quantize.*|q_.*|int_repr|choose_qparams.*|fbgemm_.*|ao|quantization|"
               r"fused_moving_avg_obs_fake_quant|_?fake_quant.*)", _QUANT),
    (r"torch", r"(.*sparse.*|smm|sspaddmm|hspmm|spmm|jagged)", _SPARSE),
    (r"torch", r"(nested|.*nested.*)", _NESTED),
    (r"torch", r"(Stream|Event|StreamObjType)", _STREAM),
    (r"torch", r"(cudnn_.*|miopen_.*|mkldnn_.*|.*_mps_.*|mps|xpu|mtia|is_vulkan_available|vulkan_.*|"
               r"accelerator|windows|.*_cudnn_.*|get_device_module)", _DEVICE),
    (r"torch", r"(bit|bits.*|int[1-7]|uint[1-7]|float8_.*|float4_.*|complex32|chalf)", _FORMAT),
    (r"torch", r"(AliasDb|AnyType|Argument|ArgumentSpec|AwaitType|BenchmarkConfig|BenchmarkExecutionStats|Block|"
               r".*Type|BufferDict|CallStack|Capsule|Code|CompleteArgumentSpec|ConcreteModuleType.*|"
               r"DeepCopyMemoTable|ErrorReport|ExecutionPlan|FileCheck|FunctionSchema|Gradient|Graph|"
               r"GraphExecutorState|IODescriptor|InferredType|LiteScriptModule|LockingLogger|LoggerBase|"
               r"ModuleDict|ParameterDict|Node|NoopLogger|OperatorInfo|PyTorchFile.*|Script.*|StaticModule|"
               r"Sym.*|TracingState|ThroughputBenchmark|Type|Use|Value|Future|AVG|SUM|AggregationType|"
               r"jit|classes|fork|wait|import_ir_module.*|merge_type_from_type_comment|parse_ir|parse_schema|"
               r"parse_type_comment|unify_type_list|init_num_threads|sym_.*)", _JIT),
    (r"torch", r"(DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|DisableTorchFunction.*|Tag|library|"
               r"ops|cpp|PRIVATE_OPS|TYPE_CHECKING|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|"
               r"has_lapack|has_mkl|has_openmp|has_spectral|package|monitor|overrides|"
               r"compiled_with_cxx11_abi|set_vital|vitals_enabled|read_vitals)", _CPP),
]

_COMPILED = [(re.compile(ns), re.compile(name), text) for ns, name, text in RULES]


def internal_reason(namespace: str, name: str) -> str | None:
    """The reason ``namespace.name`` is an internal that means nothing here, or None."""
    for ns_re, name_re, text in _COMPILED:
        if ns_re.fullmatch(namespace) and name_re.fullmatch(name):
            return text
    return None


def reason(namespace: str, name: str) -> tuple[str, str] | None:
    """(kind, text) for a torch name duograd does not build, or None when it is undecided."""
    text = internal_reason(namespace, name)
    if text is not None:
        return INTERNAL, text
    if name in NOT_BUILT_YET.get(namespace, ()):
        return NOT_BUILT, "not built yet"
    return None


# --- generated by `python -m duograd._inventory --update-unsupported` below this line
NOT_BUILT_YET: dict[str, frozenset[str]] = {
    'torch.Tensor': frozenset({
        'H', 'abs_', 'absolute', 'absolute_', 'acos_', 'acosh_', 'add', 'addbmm', 'addbmm_', 'addcdiv',
        'addcdiv_', 'addcmul', 'addcmul_', 'addmm_', 'addmv', 'addmv_', 'addr', 'addr_', 'adjoint',
        'allclose', 'aminmax', 'angle', 'apply_', 'arccos', 'arccos_', 'arccosh', 'arccosh_', 'arcsin',
        'arcsin_', 'arcsinh', 'arcsinh_', 'arctan', 'arctan2_', 'arctan_', 'arctanh', 'arctanh_', 'argwhere',
        'as_strided', 'as_strided_', 'as_strided_scatter', 'as_subclass', 'asin_', 'asinh_', 'atan2_',
        'atan_', 'atanh_', 'baddbmm_', 'bernoulli', 'bernoulli_', 'bfloat16', 'bincount', 'bitwise_and',
        'bitwise_and_', 'bitwise_left_shift', 'bitwise_left_shift_', 'bitwise_not', 'bitwise_not_',
        'bitwise_or', 'bitwise_or_', 'bitwise_right_shift', 'bitwise_right_shift_', 'bitwise_xor',
        'bitwise_xor_', 'byte', 'cauchy_', 'cdouble', 'ceil_', 'cfloat', 'chalf', 'char', 'cholesky',
        'cholesky_inverse', 'cholesky_solve', 'clamp_max', 'clamp_max_', 'clamp_min', 'clamp_min_', 'clip_',
        'conj', 'conj_physical', 'conj_physical_', 'const_data_ptr', 'copysign_', 'corrcoef', 'cos_', 'cosh_',
        'count_nonzero', 'cov', 'cross', 'cumprod_', 'cumsum_', 'deg2rad', 'deg2rad_', 'det', 'detach_',
        'diagflat', 'diagonal_scatter', 'diff', 'digamma', 'digamma_', 'dim_order', 'dist', 'div', 'divide',
        'divide_', 'dsplit', 'eig', 'element_size', 'eq', 'eq_', 'equal', 'erf_', 'erfc_', 'erfinv_', 'exp2_',
        'expand_as', 'expm1_', 'exponential_', 'fill_diagonal_', 'fix', 'fix_', 'fliplr', 'flipud',
        'float_power', 'float_power_', 'floor_', 'floor_divide_', 'fmax', 'fmin', 'fmod_', 'frac_', 'frexp',
        'gcd', 'gcd_', 'ge', 'ge_', 'geometric_', 'geqrf', 'ger', 'grad_dtype', 'grad_fn', 'greater',
        'greater_', 'greater_equal', 'greater_equal_', 'gt', 'gt_', 'half', 'hardshrink', 'hash_tensor',
        'heaviside', 'heaviside_', 'histc', 'histogram', 'hsplit', 'hypot_', 'i0', 'i0_', 'igamma', 'igamma_',
        'igammac', 'igammac_', 'imag', 'index', 'index_add_', 'index_copy', 'index_copy_', 'index_fill',
        'index_fill_', 'index_put', 'index_put_', 'index_reduce', 'index_reduce_', 'inner', 'inverse',
        'is_complex', 'is_conj', 'is_contiguous', 'is_distributed', 'is_floating_point', 'is_inference',
        'is_neg', 'is_nonzero', 'is_same_size', 'is_set_to', 'is_signed', 'isneginf', 'isposinf', 'isreal',
        'istft', 'itemsize', 'kron', 'layout', 'lcm', 'lcm_', 'ldexp', 'ldexp_', 'le', 'le_', 'lerp_', 'less',
        'less_', 'less_equal', 'less_equal_', 'lgamma', 'lgamma_', 'log10_', 'log1p_', 'log2_', 'log_',
        'log_normal_', 'logaddexp2', 'logdet', 'logical_and_', 'logical_not_', 'logical_or_', 'logical_xor_',
        'logit', 'logit_', 'lstsq', 'lt', 'lt_', 'lu', 'lu_solve', 'mH', 'map2_', 'map_', 'masked_fill_',
        'masked_scatter', 'masked_scatter_', 'matmul', 'matrix_exp', 'matrix_power', 'maximum', 'minimum',
        'module_load', 'msort', 'mul', 'multinomial', 'multiply', 'multiply_', 'mvlgamma', 'mvlgamma_',
        'name', 'nan_to_num', 'nan_to_num_', 'nanmean', 'nanmedian', 'nanquantile', 'nansum', 'narrow',
        'narrow_copy', 'nbytes', 'ndimension', 'ne', 'ne_', 'neg', 'negative', 'negative_', 'nelement', 'new',
        'new_empty', 'new_empty_strided', 'new_full', 'new_ones', 'new_tensor', 'new_zeros', 'nextafter',
        'nextafter_', 'nonzero_static', 'not_equal', 'not_equal_', 'orgqr', 'ormqr', 'output_nr', 'pinverse',
        'polygamma', 'polygamma_', 'positive', 'put', 'put_', 'qr', 'quantile', 'rad2deg', 'rad2deg_',
        'random_', 'ravel', 'real', 'reciprocal', 'reciprocal_', 'register_post_accumulate_grad_hook',
        'reinforce', 'relu_', 'remainder_', 'renorm', 'renorm_', 'reshape_as', 'resize', 'resize_',
        'resize_as', 'resize_as_', 'resolve_conj', 'resolve_neg', 'retains_grad', 'rot90', 'round_', 'rsqrt_',
        'scatter_', 'scatter_add_', 'scatter_reduce_', 'select', 'select_scatter', 'sgn', 'sgn_', 'short',
        'sigmoid_', 'sign_', 'signbit', 'sin_', 'sinc', 'sinc_', 'sinh_', 'slice_inverse', 'slice_scatter',
        'slogdet', 'solve', 'split_with_sizes', 'sqrt_', 'square', 'square_', 'squeeze_', 'stft', 'stride',
        'sub', 'subtract', 'subtract_', 'sum_to_size', 'svd', 'swapaxes', 'swapaxes_', 'swapdims',
        'swapdims_', 'symeig', 't', 't_', 'take', 'tan_', 'tanh_', 'tensor_split', 'tile', 'transpose_',
        'triangular_solve', 'tril_', 'triu_', 'true_divide', 'true_divide_', 'trunc_', 'type_as',
        'unique_consecutive', 'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes', 'unsqueeze_', 'vdot',
        'view_as', 'volatile', 'vsplit', 'xlogy', 'xlogy_',
    }),
    'torch': frozenset({
        'AcceleratorError', 'BFloat16Tensor', 'BoolTensor', 'ByteTensor', 'CharTensor', 'CompilationUnit',
        'DoubleTensor', 'FatalError', 'FloatTensor', 'Generator', 'GradScaler', 'HalfTensor', 'IntTensor',
        'JITException', 'LongTensor', 'OutOfMemoryError', 'ShortTensor', 'abs_', 'absolute', 'acos_',
        'acosh_', 'add', 'addbmm', 'addcdiv', 'addcmul', 'addmv', 'addmv_', 'addr', 'adjoint',
        'affine_grid_generator', 'alias_copy', 'allclose', 'alpha_dropout', 'alpha_dropout_', 'aminmax',
        'angle', 'arccos', 'arccos_', 'arccosh', 'arccosh_', 'arcsin', 'arcsin_', 'arcsinh', 'arcsinh_',
        'arctan', 'arctan2', 'arctan_', 'arctanh', 'arctanh_', 'argwhere', 'as_strided', 'as_strided_',
        'as_strided_copy', 'as_strided_scatter', 'as_tensor', 'asarray', 'asin_', 'asinh_', 'atan_', 'atanh_',
        'atleast_1d', 'atleast_2d', 'atleast_3d', 'autocast_decrement_nesting', 'autocast_increment_nesting',
        'bartlett_window', 'batch_norm', 'batch_norm_backward_elemt', 'batch_norm_backward_reduce',
        'batch_norm_elemt', 'batch_norm_gather_stats', 'batch_norm_gather_stats_with_counts',
        'batch_norm_stats', 'batch_norm_update_stats', 'bernoulli', 'bfloat16', 'bilinear',
        'binary_cross_entropy_with_logits', 'bincount', 'binomial', 'bitwise_and', 'bitwise_left_shift',
        'bitwise_not', 'bitwise_or', 'bitwise_right_shift', 'bitwise_xor', 'blackman_window', 'block_diag',
        'broadcast_shapes', 'broadcast_tensors', 'bucketize', 'can_cast', 'cartesian_prod',
        'ccol_indices_copy', 'cdist', 'cdouble', 'ceil_', 'celu_', 'cfloat', 'chain_matmul',
        'channel_shuffle', 'channels_last', 'channels_last_3d', 'cholesky', 'cholesky_inverse',
        'cholesky_solve', 'clamp_', 'clamp_max', 'clamp_max_', 'clamp_min', 'clamp_min_', 'classproperty',
        'clear_autocast_cache', 'clip_', 'clone', 'col_indices_copy', 'column_stack', 'combinations',
        'compiler', 'complex', 'complex128', 'complex64', 'cond', 'conj', 'conj_physical', 'conj_physical_',
        'constant_pad_nd', 'contiguous_format', 'conv_tbc', 'convolution', 'corrcoef', 'cos_', 'cosh_',
        'cosine_embedding_loss', 'count_nonzero', 'cov', 'cpu', 'cross', 'crow_indices_copy', 'ctc_loss',
        'cumulative_trapezoid', 'default_generator', 'deg2rad', 'deg2rad_', 'det', 'detach', 'detach_',
        'detach_copy', 'diagflat', 'diagonal_copy', 'diagonal_scatter', 'diff', 'digamma', 'dist',
        'distributions', 'div', 'divide', 'dropout', 'dropout_', 'dsmm', 'dsplit', 'dstack', 'dtype', 'e',
        'eig', 'embedding', 'embedding_bag', 'embedding_renorm_', 'empty_permuted', 'empty_quantized',
        'empty_strided', 'eq', 'equal', 'erf_', 'erfc_', 'exp2_', 'exp_', 'expand_copy', 'expm1_', 'export',
        'feature_alpha_dropout', 'feature_alpha_dropout_', 'feature_dropout', 'feature_dropout_', 'fft',
        'fill', 'fill_', 'finfo', 'fix', 'fix_', 'fliplr', 'flipud', 'float16', 'float_power', 'floor_',
        'fmax', 'fmin', 'frac_', 'frexp', 'frobenius_norm', 'from_dlpack', 'from_file', 'frombuffer',
        'futures', 'gcd', 'gcd_', 'ge', 'geqrf', 'ger', 'get_autocast_cpu_dtype', 'get_autocast_dtype',
        'get_autocast_gpu_dtype', 'get_autocast_ipu_dtype', 'get_autocast_xla_dtype', 'get_default_device',
        'get_deterministic_debug_mode', 'get_device', 'get_file_path', 'get_rng_state', 'gradient', 'greater',
        'greater_equal', 'grid_sampler', 'grid_sampler_2d', 'grid_sampler_3d', 'group_norm', 'gru',
        'gru_cell', 'gt', 'half', 'hamming_window', 'hann_window', 'hardshrink', 'hash_tensor', 'heaviside',
        'hinge_embedding_loss', 'histc', 'histogram', 'histogramdd', 'hsmm', 'hsplit', 'hstack', 'hub', 'i0',
        'i0_', 'igamma', 'igammac', 'iinfo', 'imag', 'index_copy', 'index_fill', 'index_put', 'index_put_',
        'index_reduce', 'indices_copy', 'inf', 'initial_seed', 'inner', 'instance_norm', 'int16', 'int8',
        'inverse', 'is_anomaly_check_nan_enabled', 'is_anomaly_enabled', 'is_autocast_cache_enabled',
        'is_autocast_cpu_enabled', 'is_autocast_enabled', 'is_autocast_ipu_enabled',
        'is_autocast_xla_enabled', 'is_complex', 'is_conj', 'is_distributed', 'is_floating_point',
        'is_inference', 'is_neg', 'is_nonzero', 'is_same_size', 'is_signed', 'is_tensor',
        'is_warn_always_enabled', 'isin', 'isneginf', 'isposinf', 'isreal', 'istft', 'kaiser_window',
        'kl_div', 'kron', 'layer_norm', 'layout', 'lcm', 'lcm_', 'ldexp', 'ldexp_', 'le',
        'legacy_contiguous_format', 'less', 'less_equal', 'lgamma', 'load', 'lobpcg', 'log10_', 'log1p_',
        'log2_', 'log_', 'logaddexp2', 'logdet', 'logit', 'logit_', 'logspace', 'lstm', 'lstm_cell', 'lstsq',
        'lt', 'lu', 'lu_solve', 'lu_unpack', 'margin_ranking_loss', 'masked', 'masked_scatter', 'matrix_exp',
        'matrix_power', 'matrix_rank', 'max_pool1d_with_indices', 'max_pool3d', 'memory_format', 'msort',
        'mul', 'multinomial', 'multiply', 'multiprocessing', 'mvlgamma', 'nan', 'nan_to_num', 'nan_to_num_',
        'nanmean', 'nanmedian', 'nanquantile', 'nansum', 'narrow', 'narrow_copy', 'native_batch_norm',
        'native_channel_shuffle', 'native_dropout', 'native_group_norm', 'native_layer_norm', 'native_norm',
        'ne', 'neg', 'neg_', 'negative', 'negative_', 'newaxis', 'nextafter', 'nonzero_static',
        'norm_except_dim', 'not_equal', 'nuclear_norm', 'numel', 'orgqr', 'ormqr', 'pairwise_distance',
        'pca_lowrank', 'pdist', 'permute', 'permute_copy', 'pi', 'pinverse', 'pixel_shuffle',
        'pixel_unshuffle', 'poisson', 'poisson_nll_loss', 'polar', 'polygamma', 'positive',
        'prepare_multiprocessing_environment', 'preserve_format', 'profiler',
        'profiler_allow_cudagraph_cupti_lazy_reinit_cuda12', 'promote_types', 'put', 'qr', 'quantile',
        'quasirandom', 'rad2deg', 'rad2deg_', 'randint_like', 'range', 'ravel', 'real', 'reciprocal',
        'reciprocal_', 'relu_', 'renorm', 'resize_as_', 'resolve_conj', 'resolve_neg', 'rms_norm', 'rnn_relu',
        'rnn_relu_cell', 'rnn_tanh', 'rnn_tanh_cell', 'rot90', 'round_', 'row_indices_copy', 'row_stack',
        'rrelu', 'rrelu_', 'rsqrt_', 'rsub', 'saddmm', 'save', 'scalar_tensor', 'searchsorted', 'seed',
        'segment_reduce', 'select', 'select_copy', 'select_scatter', 'selu_', 'serialization',
        'set_anomaly_enabled', 'set_autocast_cache_enabled', 'set_autocast_cpu_dtype',
        'set_autocast_cpu_enabled', 'set_autocast_dtype', 'set_autocast_enabled', 'set_autocast_gpu_dtype',
        'set_autocast_ipu_dtype', 'set_autocast_ipu_enabled', 'set_autocast_xla_dtype',
        'set_autocast_xla_enabled', 'set_default_device', 'set_default_tensor_type',
        'set_deterministic_debug_mode', 'set_flush_denormal', 'set_printoptions', 'set_rng_state',
        'set_warn_always', 'sgn', 'short', 'sigmoid_', 'signal', 'signbit', 'sin_', 'sinc', 'sinc_', 'sinh_',
        'slice_copy', 'slice_inverse', 'slice_scatter', 'slogdet', 'solve', 'special', 'split_copy',
        'split_with_sizes', 'split_with_sizes_copy', 'sqrt_', 'square', 'square_', 'squeeze_copy', 'std_mean',
        'stft', 'strided', 'sub', 'subtract', 'svd', 'svd_lowrank', 'swapaxes', 'swapdims', 'symeig', 't',
        't_copy', 'take', 'tan_', 'tanh_', 'tensor_split', 'tensordot', 'testing', 'thread_safe_generator',
        'threshold', 'threshold_', 'tile', 'to_dlpack', 'torch_version', 'transpose_copy', 'trapezoid',
        'trapz', 'triangular_solve', 'triplet_margin_loss', 'true_divide', 'trunc_', 'typename', 'types',
        'uint16', 'uint32', 'uint64', 'uint8', 'unbind_copy', 'unfold_copy', 'unique_consecutive',
        'unravel_index', 'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes', 'unsqueeze_copy', 'utils',
        'values_copy', 'vander', 'var_mean', 'vdot', 'version', 'view_as_complex', 'view_as_complex_copy',
        'view_as_real', 'view_as_real_copy', 'view_copy', 'vsplit', 'vstack', 'while_loop', 'xlogy',
        'xlogy_', 'zero_',
    }),
    'torch.nn.functional': frozenset({
        'ScalingType', 'SwizzleType', 'adaptive_avg_pool3d', 'adaptive_max_pool1d_with_indices',
        'adaptive_max_pool2d_with_indices', 'adaptive_max_pool3d', 'adaptive_max_pool3d_with_indices',
        'affine_grid', 'alpha_dropout', 'assert_int_or_pair', 'avg_pool3d', 'bilinear', 'boolean_dispatch',
        'celu_', 'channel_shuffle', 'conv_tbc', 'cosine_embedding_loss', 'ctc_loss', 'dropout', 'dropout1d',
        'dropout2d', 'dropout3d', 'elu_', 'embedding_bag', 'feature_alpha_dropout', 'fractional_max_pool2d',
        'fractional_max_pool2d_with_indices', 'fractional_max_pool3d', 'fractional_max_pool3d_with_indices',
        'gaussian_nll_loss', 'grid_sample', 'grouped_mm', 'gumbel_softmax', 'handle_torch_function',
        'hardshrink', 'hardtanh_', 'has_torch_function', 'has_torch_function_unary',
        'has_torch_function_variadic', 'hinge_embedding_loss', 'instance_norm', 'leaky_relu_', 'linear',
        'linear_cross_entropy', 'local_response_norm', 'lp_pool1d', 'lp_pool2d', 'lp_pool3d',
        'margin_ranking_loss', 'max_pool1d_with_indices', 'max_pool2d_with_indices', 'max_pool3d',
        'max_pool3d_with_indices', 'max_unpool3d', 'multi_head_attention_forward', 'multi_margin_loss',
        'multilabel_margin_loss', 'multilabel_soft_margin_loss', 'native_channel_shuffle',
        'pairwise_distance', 'pdist', 'pixel_shuffle', 'pixel_unshuffle', 'poisson_nll_loss', 'relu_',
        'rms_norm', 'rrelu', 'rrelu_', 'scaled_grouped_mm', 'scaled_mm', 'selu_', 'sigmoid',
        'soft_margin_loss', 'softshrink', 'tanh', 'tanhshrink', 'threshold', 'threshold_',
        'triplet_margin_loss', 'triplet_margin_with_distance_loss', 'upsample', 'upsample_bilinear',
        'upsample_nearest',
    }),
    'torch.nn': frozenset({
        'AdaptiveAvgPool3d', 'AdaptiveLogSoftmaxWithLoss', 'AdaptiveMaxPool3d', 'AlphaDropout', 'AvgPool3d',
        'BatchNorm3d', 'Bilinear', 'Buffer', 'CTCLoss', 'ChannelShuffle', 'CircularPad1d', 'CircularPad2d',
        'CircularPad3d', 'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'Container', 'ConvTranspose3d',
        'CosineEmbeddingLoss', 'CrossMapLRN2d', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'EmbeddingBag',
        'FeatureAlphaDropout', 'FractionalMaxPool2d', 'FractionalMaxPool3d', 'GRU', 'GRUCell',
        'GaussianNLLLoss', 'Hardshrink', 'HingeEmbeddingLoss', 'InstanceNorm1d', 'InstanceNorm2d',
        'InstanceNorm3d', 'LPPool1d', 'LPPool2d', 'LPPool3d', 'LSTM', 'LSTMCell', 'LazyBatchNorm1d',
        'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyConv1d', 'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d',
        'LazyConvTranspose2d', 'LazyConvTranspose3d', 'LazyInstanceNorm1d', 'LazyInstanceNorm2d',
        'LazyInstanceNorm3d', 'LazyLinear', 'LinearCrossEntropyLoss', 'LinearCrossEntropyOptions',
        'LocalResponseNorm', 'MarginRankingLoss', 'MaxPool3d', 'MaxUnpool3d', 'MultiLabelMarginLoss',
        'MultiLabelSoftMarginLoss', 'MultiMarginLoss', 'NLLLoss2d', 'PairwiseDistance', 'ParameterDict',
        'ParameterList', 'PixelShuffle', 'PixelUnshuffle', 'PoissonNLLLoss', 'RMSNorm', 'RNN', 'RNNBase',
        'RNNCell', 'RNNCellBase', 'RReLU', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d',
        'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'SoftMarginLoss', 'Softmax2d',
        'Softshrink', 'SyncBatchNorm', 'Tanhshrink', 'Threshold', 'Transformer', 'TransformerDecoder',
        'TransformerDecoderLayer', 'TransformerEncoder', 'TransformerEncoderLayer', 'TripletMarginLoss',
        'TripletMarginWithDistanceLoss', 'Unflatten', 'UninitializedBuffer', 'UninitializedParameter',
        'UpsamplingBilinear2d', 'UpsamplingNearest2d', 'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d', 'common_types',
        'factory_kwargs', 'grad', 'init', 'intrinsic', 'parameter', 'qat', 'quantizable', 'quantized',
    }),
    'torch.nn.init': frozenset({
        'calculate_gain', 'constant', 'constant_', 'dirac', 'dirac_', 'eye', 'eye_', 'kaiming_normal',
        'kaiming_normal_', 'kaiming_uniform', 'kaiming_uniform_', 'normal', 'normal_', 'ones_', 'orthogonal',
        'orthogonal_', 'sparse', 'sparse_', 'trunc_normal_', 'uniform', 'uniform_', 'xavier_normal',
        'xavier_normal_', 'xavier_uniform', 'xavier_uniform_', 'zeros_',
    }),
    'torch.optim': frozenset({
        'ASGD', 'Adadelta', 'Adafactor', 'LBFGS', 'Muon', 'RAdam', 'Rprop', 'SparseAdam', 'swa_utils',
        'swap_in_optimizer_params_and_state',
    }),
    'torch.optim.lr_scheduler': frozenset({
        'ChainedScheduler', 'ConstantLR', 'CosineAnnealingWarmRestarts', 'CyclicLR', 'MultiStepLR',
        'MultiplicativeLR', 'PolynomialLR',
    }),
    'torch.utils.data': frozenset({
        'BatchSampler', 'ChainDataset', 'ConcatDataset', 'DFIterDataPipe', 'DataChunk', 'DataLoader',
        'Dataset', 'DistributedSampler', 'IterDataPipe', 'IterableDataset', 'MapDataPipe', 'RandomSampler',
        'Sampler', 'SequentialSampler', 'StackDataset', 'Subset', 'SubsetRandomSampler', 'TensorDataset',
        'WeightedRandomSampler', 'argument_validation', 'dataloader', 'datapipes', 'dataset',
        'default_collate', 'default_convert', 'distributed', 'functional_datapipe', 'get_worker_info',
        'graph', 'graph_settings', 'guaranteed_datapipes_determinism', 'non_deterministic', 'random_split',
        'runtime_validation', 'runtime_validation_disabled', 'sampler',
    }),
    'torch.func': frozenset({
        'debug_unwrap', 'functional_call', 'functionalize', 'grad_and_value', 'linearize', 'rearrange',
        'replace_all_batch_norm_modules_', 'stack_module_state',
    }),
    'torch.autograd': frozenset({
        'NestedIOFunction', 'Variable', 'anomaly_mode', 'detect_anomaly', 'enforce_grad_layout_policy',
        'forward_ad', 'function', 'functional', 'grad_mode', 'gradcheck', 'gradgradcheck', 'graph',
        'handle_torch_function', 'has_torch_function', 'inference_mode', 'is_multithreading_enabled',
        'is_tensor_like', 'is_view_replay_enabled', 'kineto_available', 'profiler', 'profiler_legacy',
        'profiler_util', 'set_detect_anomaly', 'set_multithreading_enabled', 'variable',
    }),
    'torch.autograd.graph': frozenset({
        'GradientEdge', 'Node', 'allow_mutation_on_saved_tensors', 'disable_saved_tensors_hooks',
        'get_gradient_edge', 'increment_version', 'region_activation_memory_budget',
        'register_multi_grad_hook', 'save_on_cpu', 'saved_tensors_hooks', 'set_override_stale_capture_stream',
        'set_warn_on_accumulate_grad_stream_mismatch',
    }),
    'torch.autograd.functional': frozenset({
        'hessian', 'hvp', 'jacobian', 'jvp', 'vhp', 'vjp',
    }),
    'torch.autograd.forward_ad': frozenset({
        'UnpackedDualTensor', 'dual_level', 'enter_dual_level', 'exit_dual_level', 'make_dual', 'unpack_dual',
    }),
    'torch.distributions': frozenset({
        'AbsTransform', 'AffineTransform', 'Bernoulli', 'Beta', 'Binomial', 'CatTransform', 'Categorical',
        'Cauchy', 'Chi2', 'ComposeTransform', 'ContinuousBernoulli', 'CorrCholeskyTransform',
        'CumulativeDistributionTransform', 'Dirichlet', 'Distribution', 'ExpTransform', 'Exponential',
        'ExponentialFamily', 'FisherSnedecor', 'Gamma', 'GeneralizedPareto', 'Geometric', 'Gumbel',
        'HalfCauchy', 'HalfNormal', 'Independent', 'IndependentTransform', 'InverseGamma', 'Kumaraswamy',
        'LKJCholesky', 'Laplace', 'LogNormal', 'LogisticNormal', 'LowRankMultivariateNormal',
        'LowerCholeskyTransform', 'MixtureSameFamily', 'Multinomial', 'MultivariateNormal',
        'NegativeBinomial', 'Normal', 'OneHotCategorical', 'OneHotCategoricalStraightThrough', 'Pareto',
        'Poisson', 'PositiveDefiniteTransform', 'PowerTransform', 'RelaxedBernoulli',
        'RelaxedOneHotCategorical', 'ReshapeTransform', 'SigmoidTransform', 'SoftmaxTransform',
        'SoftplusTransform', 'StackTransform', 'StickBreakingTransform', 'StudentT', 'TanhTransform',
        'Transform', 'TransformedDistribution', 'Uniform', 'VonMises', 'Weibull', 'Wishart', 'bernoulli',
        'beta', 'biject_to', 'binomial', 'categorical', 'cauchy', 'chi2', 'constraint_registry',
        'constraints', 'continuous_bernoulli', 'dirichlet', 'distribution', 'exp_family', 'exponential',
        'fishersnedecor', 'gamma', 'generalized_pareto', 'geometric', 'gumbel', 'half_cauchy', 'half_normal',
        'identity_transform', 'independent', 'inverse_gamma', 'kl', 'kl_divergence', 'kumaraswamy', 'laplace',
        'lkj_cholesky', 'log_normal', 'logistic_normal', 'lowrank_multivariate_normal', 'mixture_same_family',
        'multinomial', 'multivariate_normal', 'negative_binomial', 'normal', 'one_hot_categorical', 'pareto',
        'poisson', 'register_kl', 'relaxed_bernoulli', 'relaxed_categorical', 'studentT', 'transform_to',
        'transformed_distribution', 'transforms', 'uniform', 'utils', 'von_mises', 'weibull', 'wishart',
    }),
    'torch.linalg': frozenset({
        'cholesky', 'cholesky_ex', 'cond', 'cross', 'det', 'diagonal', 'eig', 'eigh', 'eigvals', 'eigvalsh',
        'householder_product', 'inv', 'inv_ex', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve', 'lstsq', 'lu',
        'lu_factor', 'lu_factor_ex', 'lu_solve', 'matmul', 'matrix_exp', 'matrix_power', 'matrix_rank',
        'multi_dot', 'pinv', 'qr', 'slogdet', 'solve', 'solve_ex', 'solve_triangular', 'svd', 'svdvals',
        'tensorinv', 'tensorsolve', 'vander', 'vecdot',
    }),
    'torch.special': frozenset({
        'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'chebyshev_polynomial_t',
        'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w', 'digamma', 'entr',
        'erf', 'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammainc', 'gammaincc', 'gammaln',
        'hermite_polynomial_h', 'hermite_polynomial_he', 'i0', 'i0e', 'i1', 'i1e', 'laguerre_polynomial_l',
        'legendre_polynomial_p', 'log1p', 'log_ndtr', 'log_softmax', 'logit', 'logsumexp',
        'modified_bessel_i0', 'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1',
        'multigammaln', 'ndtr', 'ndtri', 'polygamma', 'psi', 'round', 'scaled_modified_bessel_k0',
        'scaled_modified_bessel_k1', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
        'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'sinc', 'softmax',
        'spherical_bessel_j0', 'xlog1py', 'xlogy', 'zeta',
    }),
    'torch.fft': frozenset({
        'Tensor', 'fft', 'fft2', 'fftfreq', 'fftn', 'fftshift', 'hfft', 'hfft2', 'hfftn', 'ifft', 'ifft2',
        'ifftn', 'ifftshift', 'ihfft', 'ihfft2', 'ihfftn', 'irfft', 'irfft2', 'irfftn', 'rfft', 'rfft2',
        'rfftfreq', 'rfftn',
    }),
    'torch.functional': frozenset({
        'atleast_1d', 'atleast_2d', 'atleast_3d', 'block_diag', 'boolean_dispatch', 'broadcast_shapes',
        'broadcast_tensors', 'cartesian_prod', 'cdist', 'chain_matmul', 'handle_torch_function',
        'has_torch_function', 'has_torch_function_unary', 'has_torch_function_variadic', 'istft', 'lu',
        'overload', 'pca_lowrank', 'stft', 'svd_lowrank', 'tensordot', 'unique_consecutive', 'unravel_index',
    }),
    'torch.onnx': frozenset({
        'ExportableModule', 'InputObserver', 'JitScalarType', 'ONNXProgram', 'OnnxExporterError', 'errors',
        'ops', 'register_custom_op_symbolic', 'select_model_mode_for_export', 'symbolic_helper',
        'symbolic_opset10', 'symbolic_opset9', 'unregister_custom_op_symbolic', 'utils',
    }),
    'torch.nn.parallel': frozenset({
        'DistributedDataParallelCPU', 'distributed',
    }),
    'torch.fx': frozenset({
        'CodeGen', 'Graph', 'GraphModule', 'Interpreter', 'Node', 'Proxy', 'ProxyableClassMeta', 'Tracer',
        'Transformer', 'config', 'experimental', 'graph', 'graph_module', 'has_side_effect',
        'immutable_collections', 'interpreter', 'map_arg', 'node', 'operator_schemas', 'passes', 'proxy',
        'replace_pattern', 'subgraph_rewriter', 'symbolic_trace', 'tensor_type', 'traceback', 'wrap',
    }),
    'torch.jit': frozenset({
        'ONNXTracedModule', 'TracerWarning', 'TracingCheckError', 'jit_module_from_flatbuffer',
        'optimized_execution',
    }),
    'torch.backends': frozenset({
        'cpu',
    }),
    'torch.amp': frozenset({
        'autocast_mode', 'custom_bwd', 'custom_fwd', 'grad_scaler',
    }),
}
