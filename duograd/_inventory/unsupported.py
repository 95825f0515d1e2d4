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
        'as_strided_', 'as_strided_scatter', 'as_subclass', 'bfloat16', 'cdouble', 'cfloat', 'chalf',
        'const_data_ptr', 'geqrf', 'grad_dtype', 'hash_tensor', 'index', 'index_reduce', 'index_reduce_',
        'istft', 'lu', 'lu_solve', 'module_load', 'nonzero_static', 'orgqr', 'ormqr',
        'register_post_accumulate_grad_hook', 'reinforce', 'retains_grad', 'slice_inverse', 'stft',
        'volatile',
    }),
    'torch': frozenset({
        'AcceleratorError', 'BFloat16Tensor', 'CompilationUnit', 'FatalError', 'GradScaler', 'JITException',
        'OutOfMemoryError', 'affine_grid_generator', 'as_strided_', 'as_strided_scatter',
        'batch_norm_backward_elemt', 'batch_norm_backward_reduce', 'batch_norm_elemt',
        'batch_norm_gather_stats', 'batch_norm_gather_stats_with_counts', 'batch_norm_stats',
        'batch_norm_update_stats', 'bfloat16', 'binomial', 'ccol_indices_copy', 'cdouble', 'cfloat',
        'channels_last', 'channels_last_3d', 'classproperty', 'col_indices_copy', 'compiler', 'complex',
        'complex128', 'complex64', 'convolution', 'cpu', 'crow_indices_copy', 'ctc_loss', 'default_generator',
        'dsmm', 'dtype', 'e', 'embedding_bag', 'embedding_renorm_', 'empty_permuted', 'empty_quantized',
        'export', 'fft', 'finfo', 'float16', 'from_dlpack', 'from_file', 'frombuffer', 'futures', 'geqrf',
        'get_autocast_cpu_dtype', 'get_autocast_dtype', 'get_autocast_gpu_dtype', 'get_autocast_ipu_dtype',
        'get_autocast_xla_dtype', 'get_file_path', 'gradient', 'grid_sampler', 'grid_sampler_2d',
        'grid_sampler_3d', 'gru', 'gru_cell', 'half', 'hash_tensor', 'histogramdd', 'hsmm', 'hub', 'iinfo',
        'index_reduce', 'indices_copy', 'inf', 'int16', 'int8', 'istft', 'layout', 'legacy_contiguous_format',
        'lobpcg', 'lstm', 'lstm_cell', 'lu', 'lu_solve', 'lu_unpack', 'masked', 'max_pool1d_with_indices',
        'max_pool3d', 'memory_format', 'multiprocessing', 'nan', 'native_batch_norm', 'native_dropout',
        'native_group_norm', 'native_layer_norm', 'native_norm', 'newaxis', 'nonzero_static',
        'norm_except_dim', 'orgqr', 'ormqr', 'pca_lowrank', 'pi', 'polar',
        'prepare_multiprocessing_environment', 'profiler',
        'profiler_allow_cudagraph_cupti_lazy_reinit_cuda12', 'quasirandom', 'rms_norm', 'rnn_relu',
        'rnn_relu_cell', 'rnn_tanh', 'rnn_tanh_cell', 'row_indices_copy', 'saddmm', 'segment_reduce',
        'set_autocast_cpu_dtype', 'set_autocast_dtype', 'set_autocast_gpu_dtype', 'set_autocast_ipu_dtype',
        'set_autocast_xla_dtype', 'short', 'signal', 'slice_inverse', 'stft', 'svd_lowrank', 'testing',
        'thread_safe_generator', 'to_dlpack', 'torch_version', 'types', 'uint16', 'uint32', 'uint64', 'uint8',
        'values_copy', 'version', 'view_as_complex', 'view_as_complex_copy', 'view_as_real',
        'view_as_real_copy',
    }),
    'torch.nn.functional': frozenset({
        'ScalingType', 'SwizzleType', 'assert_int_or_pair', 'boolean_dispatch', 'grouped_mm',
        'handle_torch_function', 'has_torch_function', 'has_torch_function_unary',
        'has_torch_function_variadic', 'scaled_grouped_mm', 'scaled_mm',
    }),
    'torch.nn': frozenset({
        'common_types', 'factory_kwargs', 'grad', 'intrinsic', 'parameter', 'qat', 'quantizable', 'quantized',
    }),
    'torch.optim': frozenset({
        'swa_utils', 'swap_in_optimizer_params_and_state',
    }),
    'torch.utils.data': frozenset({
        'DFIterDataPipe', 'DataChunk', 'DistributedSampler', 'IterDataPipe', 'MapDataPipe', 'StackDataset',
        'argument_validation', 'datapipes', 'distributed', 'functional_datapipe', 'graph', 'graph_settings',
        'guaranteed_datapipes_determinism', 'non_deterministic', 'runtime_validation',
        'runtime_validation_disabled',
    }),
    'torch.func': frozenset({
        'debug_unwrap', 'functionalize', 'linearize', 'rearrange', 'replace_all_batch_norm_modules_',
    }),
    'torch.autograd': frozenset({
        'NestedIOFunction', 'Variable', 'anomaly_mode', 'detect_anomaly', 'enforce_grad_layout_policy',
        'grad_mode', 'handle_torch_function', 'has_torch_function', 'inference_mode',
        'is_multithreading_enabled', 'is_tensor_like', 'is_view_replay_enabled', 'kineto_available',
        'profiler', 'profiler_legacy', 'profiler_util', 'set_detect_anomaly', 'set_multithreading_enabled',
        'variable',
    }),
    'torch.autograd.graph': frozenset({
        'GradientEdge', 'allow_mutation_on_saved_tensors', 'get_gradient_edge', 'increment_version',
        'region_activation_memory_budget', 'register_multi_grad_hook', 'set_override_stale_capture_stream',
        'set_warn_on_accumulate_grad_stream_mismatch',
    }),
    'torch.distributions': frozenset({
        'AbsTransform', 'Binomial', 'CatTransform', 'Cauchy', 'Chi2', 'ContinuousBernoulli',
        'CorrCholeskyTransform', 'CumulativeDistributionTransform', 'ExponentialFamily', 'FisherSnedecor',
        'GeneralizedPareto', 'Geometric', 'Gumbel', 'HalfCauchy', 'HalfNormal', 'IndependentTransform',
        'InverseGamma', 'Kumaraswamy', 'LKJCholesky', 'LogNormal', 'LogisticNormal',
        'LowRankMultivariateNormal', 'LowerCholeskyTransform', 'MixtureSameFamily', 'Multinomial',
        'NegativeBinomial', 'OneHotCategoricalStraightThrough', 'Pareto', 'Poisson',
        'PositiveDefiniteTransform', 'PowerTransform', 'RelaxedBernoulli', 'RelaxedOneHotCategorical',
        'ReshapeTransform', 'SoftmaxTransform', 'SoftplusTransform', 'StackTransform',
        'StickBreakingTransform', 'StudentT', 'VonMises', 'Weibull', 'Wishart', 'bernoulli', 'beta',
        'biject_to', 'binomial', 'categorical', 'cauchy', 'chi2', 'constraint_registry',
        'continuous_bernoulli', 'dirichlet', 'exp_family', 'exponential', 'fishersnedecor', 'gamma',
        'generalized_pareto', 'geometric', 'gumbel', 'half_cauchy', 'half_normal', 'identity_transform',
        'independent', 'inverse_gamma', 'kumaraswamy', 'laplace', 'lkj_cholesky', 'log_normal',
        'logistic_normal', 'lowrank_multivariate_normal', 'mixture_same_family', 'multinomial',
        'multivariate_normal', 'negative_binomial', 'normal', 'one_hot_categorical', 'pareto', 'poisson',
        'relaxed_bernoulli', 'relaxed_categorical', 'studentT', 'transform_to', 'transformed_distribution',
        'uniform', 'utils', 'von_mises', 'weibull', 'wishart',
    }),
    'torch.linalg': frozenset({
        'eig', 'eigvals', 'householder_product', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve', 'lstsq', 'lu',
        'lu_factor', 'lu_factor_ex', 'lu_solve',
    }),
    'torch.fft': frozenset({
        'Tensor', 'fft', 'fft2', 'fftfreq', 'fftn', 'fftshift', 'hfft', 'hfft2', 'hfftn', 'ifft', 'ifft2',
        'ifftn', 'ifftshift', 'ihfft', 'ihfft2', 'ihfftn', 'irfft', 'irfft2', 'irfftn', 'rfft', 'rfft2',
        'rfftfreq', 'rfftn',
    }),
    'torch.functional': frozenset({
        'boolean_dispatch', 'handle_torch_function', 'has_torch_function', 'has_torch_function_unary',
        'has_torch_function_variadic', 'istft', 'lu', 'overload', 'pca_lowrank', 'stft', 'svd_lowrank',
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
