"""What the conformance table does not hold as rows: names covered by a named test elsewhere,
and the names that still have no row (each engineer who adds a row takes its name out)."""

# name -> "path::test_function" of the test that compares it against torch
COVERED_BY: dict[str, str] = {
    # torch.compile's contract (the compiled call computes what eager does), checked against eager
    "dg.compile": "tests/compiled/test_compile.py::test_every_op_forward_and_backward_replays_bit_for_bit",
    # layers branch (tests that compare these with torch)
    "nn.Embedding": "tests/nn_optim/test_layers.py::test_embedding_with_padding_matches_torch",
    "nn.LayerNorm": "tests/nn_optim/test_layers.py::test_layer_norm_matches_torch",
    "nn.GroupNorm": "tests/nn_optim/test_layers.py::test_group_norm_matches_torch",
    "nn.BatchNorm1d": "tests/nn_optim/test_layers.py::test_batch_norm_trains_and_evaluates_like_torch_over_several_steps",
    "nn.BatchNorm2d": "tests/nn_optim/test_layers.py::test_batch_norm_trains_and_evaluates_like_torch_over_several_steps",
    "nn.MultiheadAttention": "tests/nn_optim/test_layers.py::test_multihead_attention_matches_torch",
    "nn.Identity": "tests/nn_optim/test_layers.py::test_containers_and_named_modules_match_torch_names",
    "nn.ModuleList": "tests/nn_optim/test_layers.py::test_containers_and_named_modules_match_torch_names",
    "nn.ModuleDict": "tests/nn_optim/test_layers.py::test_containers_and_named_modules_match_torch_names",
    "nn.Parameter": "tests/nn_optim/test_layers.py::test_parameter_is_a_tensor_that_requires_grad_and_registers",
    "nn.Module": "tests/nn_optim/test_layers.py::test_load_state_dict_strict_and_not_strict_as_torch",
    "nn.NLLLoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.BCELoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.BCEWithLogitsLoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.L1Loss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.SmoothL1Loss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.HuberLoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.KLDivLoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.CosineSimilarity": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.CrossEntropyLoss": "tests/nn_optim/test_layers.py::test_loss_modules_match_torch",
    "nn.MSELoss": "tests/nn_optim/test_nn_oracle.py::test_loss_module_matches_torch",
    "nn.Sigmoid": "tests/nn_optim/test_nn_oracle.py::test_sigmoid_module_matches_torch",
    "nn.Dropout": "tests/nn_optim/test_nn_oracle.py::test_dropout_scale_matches_torch",
    "nn.Sequential": "tests/nn_optim/test_nn_oracle.py::test_load_torch_state_dict_into_mlp_gives_torch_outputs",
    "nn.ReLU": "tests/nn_optim/test_nn_oracle.py::test_load_torch_state_dict_into_mlp_gives_torch_outputs",
    "nn.Tanh": "tests/nn_optim/test_nn_oracle.py::test_load_torch_state_dict_into_mlp_gives_torch_outputs",
    "nn.Linear": "tests/nn_optim/test_nn_oracle.py::test_load_torch_state_dict_into_mlp_gives_torch_outputs",
    "optim.Optimizer": "tests/nn_optim/test_optim_more.py::test_state_dict_structure_and_loading_torch_state_continues_identically",
    "optim.SGD": "tests/nn_optim/test_optim_oracle.py::test_optimizer_trajectory_matches_torch_to_1e_14",
    "optim.Adam": "tests/nn_optim/test_optim_oracle.py::test_optimizer_trajectory_matches_torch_to_1e_14",
    "optim.AdamW": "tests/nn_optim/test_optim_oracle.py::test_optimizer_trajectory_matches_torch_to_1e_14",
    "optim.RMSprop": "tests/nn_optim/test_optim_oracle.py::test_optimizer_trajectory_matches_torch_to_1e_14",
    "optim.Adagrad": "tests/nn_optim/test_optim_more.py::test_optimizer_matches_torch_over_30_steps",
    "optim.Adamax": "tests/nn_optim/test_optim_more.py::test_optimizer_matches_torch_over_30_steps",
    "optim.NAdam": "tests/nn_optim/test_optim_more.py::test_optimizer_matches_torch_over_30_steps",
    "lr_scheduler.LRScheduler": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.StepLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.ExponentialLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.CosineAnnealingLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.LinearLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.LambdaLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.OneCycleLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.SequentialLR": "tests/nn_optim/test_optim_more.py::test_schedule_matches_torch_over_30_steps",
    "lr_scheduler.ReduceLROnPlateau": "tests/nn_optim/test_optim_more.py::test_reduce_lr_on_plateau_matches_torch",
    "nn.Conv1d": "tests/nn_optim/test_conv_layers.py::test_layer_loaded_from_torch_gives_torch_outputs_and_gradients",
    "nn.Conv2d": "tests/nn_optim/test_conv_layers.py::test_layer_loaded_from_torch_gives_torch_outputs_and_gradients",
    "nn.Conv3d": "tests/nn_optim/test_conv_layers.py::test_layer_loaded_from_torch_gives_torch_outputs_and_gradients",
    "nn.ConvTranspose1d": "tests/nn_optim/test_conv_layers.py::test_layer_loaded_from_torch_gives_torch_outputs_and_gradients",
    "nn.ConvTranspose2d": "tests/nn_optim/test_conv_layers.py::test_layer_loaded_from_torch_gives_torch_outputs_and_gradients",
}

# Public names that torch also has and that have no row yet. Empty when the table is complete.
KNOWN_MISSING: frozenset[str] = frozenset({
})

# issue 28 (branch nnoptim): the new optimizers and schedules, compared with torch step by step
COVERED_BY.update({
    "optim.Adadelta": "tests/nn_optim/test_optim_new.py::test_new_optimizer_matches_torch_over_30_steps",
    "optim.RAdam": "tests/nn_optim/test_optim_new.py::test_new_optimizer_matches_torch_over_30_steps",
    "optim.Rprop": "tests/nn_optim/test_optim_new.py::test_new_optimizer_matches_torch_over_30_steps",
    "optim.ASGD": "tests/nn_optim/test_optim_new.py::test_new_optimizer_matches_torch_over_30_steps",
    "optim.Adafactor": "tests/nn_optim/test_optim_new.py::test_new_optimizer_matches_torch_over_30_steps",
    "optim.Muon": "tests/nn_optim/test_optim_new.py::test_muon_matches_torch_over_30_steps",
    "optim.LBFGS": "tests/nn_optim/test_optim_new.py::test_lbfgs_matches_torch",
    "optim.SparseAdam": "tests/nn_optim/test_optim_new.py::test_sparse_adam_is_refused_by_name",
    "lr_scheduler.MultiStepLR": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.ConstantLR": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.PolynomialLR": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.MultiplicativeLR": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.CyclicLR": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.CosineAnnealingWarmRestarts": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
    "lr_scheduler.ChainedScheduler": "tests/nn_optim/test_lr_scheduler_new.py::test_lr_sequence_matches_torch",
})

# issue 28 (branch nnoptim): the random functions of nn.functional (draws differ from torch's by design)
COVERED_BY.update({
    "F.dropout": "tests/nn_optim/test_nnfunc.py::test_dropout_masks_scale_and_statistics",
    "F.dropout1d": "tests/nn_optim/test_nnfunc.py::test_dropout_masks_scale_and_statistics",
    "F.dropout2d": "tests/nn_optim/test_nnfunc.py::test_dropout_masks_scale_and_statistics",
    "F.dropout3d": "tests/nn_optim/test_nnfunc.py::test_dropout_masks_scale_and_statistics",
    "F.alpha_dropout": "tests/nn_optim/test_nnfunc.py::test_alpha_dropout_keeps_selu_statistics_as_torch",
    "F.feature_alpha_dropout": "tests/nn_optim/test_nnfunc.py::test_alpha_dropout_keeps_selu_statistics_as_torch",
    "F.gumbel_softmax": "tests/nn_optim/test_nnfunc.py::test_gumbel_softmax_soft_and_hard",
})
