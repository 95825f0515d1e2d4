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
    # branch data: the default generator's seed and state (values are NumPy's: checked by
    # reproducing draws, the API against torch's)
    "dg.seed": "tests/data/test_data_random.py::test_default_generator_state_and_manual_seed_in_place",
    "dg.initial_seed": "tests/data/test_data_random.py::test_default_generator_state_and_manual_seed_in_place",
    "dg.get_rng_state": "tests/data/test_data_random.py::test_default_generator_state_and_manual_seed_in_place",
    "dg.set_rng_state": "tests/data/test_data_random.py::test_default_generator_state_and_manual_seed_in_place",
    # serialization branch: files written by one library and read by the other
    "dg.save": "tests/serialization/test_serialization.py::test_every_dtype_goes_both_ways_with_torch",
    "dg.load": "tests/serialization/test_serialization.py::test_map_location_forms_and_bad_ones",
    # transformer branch
    "nn.TransformerEncoderLayer": "tests/nn_optim/test_transformer.py::test_encoder_layer_matches_torch",
    "nn.TransformerDecoderLayer": "tests/nn_optim/test_transformer.py::test_decoder_layer_matches_torch",
    "nn.TransformerEncoder": "tests/nn_optim/test_transformer.py::test_encoder_stack_matches_torch",
    "nn.TransformerDecoder": "tests/nn_optim/test_transformer.py::test_decoder_stack_matches_torch",
    "nn.Transformer": "tests/nn_optim/test_transformer.py::test_transformer_matches_torch",
}

# Public names that torch also has and that have no row yet. Empty when the table is complete.
KNOWN_MISSING: frozenset[str] = frozenset({
})
