"""What the harness substitutes, what it does not run, and its quick subset."""

import fnmatch

#: scikit-learn's public name -> the module that exports it; cdlearn's object of the
#: same name replaces it. Names cdlearn does not (yet) export are left alone.
SUBSTITUTES = {
    "Lasso": "sklearn.linear_model",
    "ElasticNet": "sklearn.linear_model",
    "Ridge": "sklearn.linear_model",
    "LogisticRegression": "sklearn.linear_model",
    "LassoCV": "sklearn.linear_model",
    "ElasticNetCV": "sklearn.linear_model",
    "LogisticRegressionCV": "sklearn.linear_model",
    "MultiTaskLasso": "sklearn.linear_model",
    "MultiTaskElasticNet": "sklearn.linear_model",
    "MultiTaskLassoCV": "sklearn.linear_model",
    "MultiTaskElasticNetCV": "sklearn.linear_model",
    "lasso_path": "sklearn.linear_model",
    "enet_path": "sklearn.linear_model",
    "LinearSVC": "sklearn.svm",
}

#: Tests that exercise scikit-learn internals no substitute can have, as
#: ``(pattern, reason)``; the pattern is matched (fnmatch) against
#: ``<file name>::<test name>[<parameters>]``. Not run. Keep it short and honest:
#: a test of behaviour a user sees is applicable.
NOT_APPLICABLE: list[tuple[str, str]] = [
    ("test_logistic.py::test_get_default_scorer*",
     "calls the private LogisticRegressionCV._get_scorer"),
    ("test_logistic.py::test_logistic_regression_callback*",
     "scikit-learn's callback framework (set_callbacks) hooks its own solvers' iterations; "
     "cdlearn's is the callback of cdlearn.solve"),
    ("test_logistic.py::test_logisticregression_warns_with_n_jobs*",
     "scikit-learn deprecates n_jobs, which no longer has an effect there; cdlearn's n_jobs "
     "runs the one-vs-rest problems on threads"),
    ("test_coordinate_descent.py::test_lasso_alpha_warning",
     "scikit-learn's advice that its CD converges badly at alpha=0; cdlearn solves alpha=0 "
     "as the unpenalised problem (newton-cd, gap 1e-12 on this test's data)"),
    ("test_coordinate_descent.py::test_warm_start_convergence_with_regularizer_decrement",
     "compares n_iter_ as counted by scikit-learn's CD; cdlearn's ws-cd needs 3 outer "
     "iterations for both alphas (n_iter_ 3 > 3 fails)"),
    ("test_coordinate_descent.py::test_1d_multioutput_*_cv",
     "compares with scikit-learn's MultiTask*CV (not substituted) at 7 decimals; at tol=1e-4 "
     "it is 1.2e-4 from the optimum, cdlearn's LassoCV 1.4e-9 (MultiTaskLassoCV(tol=1e-12))"),
    ("test_logistic.py::test_logreg_predict_proba_multinomial*",
     "calls the private LinearClassifierMixin._predict_proba_lr"),
    ("test_coordinate_descent.py::test_enet_nonfinite_params",
     "cdlearn refuses X with entries above 1e50 before any iteration (ValueError naming the "
     "limit); the test matches scikit-learn's text for coefficients that overflowed in its CD"),
    ("test_coordinate_descent.py::test_lassoCV_does_not_set_precompute*",
     "monkeypatches the Lasso inside sklearn.linear_model._coordinate_descent, which "
     "cdlearn's LassoCV does not use"),
    ("test_ridge.py::test_ridge_fit_intercept_sparse_error*",
     "scikit-learn's svd/cholesky/saga cannot fit an intercept on sparse X (ValueError); the "
     "cdlearn methods these names map to can (tested dense = sparse)"),
    ("test_ridge.py::test_ridge_fit_intercept_sparse_sag*",
     "ends with scikit-learn's advice that its sag needs many iterations for an intercept on "
     "sparse X (UserWarning); cdlearn's dual CD has no such limit"),
    ("test_*.py::test_*liblinear_intercept_handling",
     "liblinear penalises the intercept (a feature of value intercept_scaling); cdlearn's "
     "is unpenalised (liblinear's limit of a large intercept_scaling), as documented"),
    ("test_bounds.py::test_l1_min_c?fit-intercept-*",
     "l1_min_c's bound with an intercept is liblinear's, whose intercept is penalised; "
     "cdlearn's is unpenalised (as documented)"),
    ("test_coordinate_descent.py::test_enet_copy_X_False_check_input_False",
     "asserts that scikit-learn's ElasticNet(copy_X=False) overwrites X (it centres X in "
     "place); cdlearn never modifies X, whatever copy_X (documented)"),
    ("test_coordinate_descent.py::test_check_input_false",
     "expects the ValueError of scikit-learn's Fortran-ordered Cython memoryview for a "
     "C-ordered X with check_input=False; cdlearn's CD fits either layout"),
    ("test_sag.py::test_sag_classifier_computed_correctly*",
     "compares with scikit-learn's sparse SAG after 50 epochs, coef [1.162, -0.897], not yet the optimum [0.4168, -1.3244] (lbfgs tol=1e-12), where cdlearn's fit is"),
    ("test_sag.py::test_binary_classifier_class_weight*",
     "compares with scikit-learn's SAG after 20 epochs, coef [0.097, 0.583], not yet the optimum [-0.1043, 0.5534] (lbfgs tol=1e-12), where cdlearn's fit is"),
    ("test_logistic.py::test_large_sparse_matrix?*-liblinear?",
     "scikit-learn's liblinear/sag/saga C code takes 32-bit sparse indices only (ValueError); cdlearn's kernels take int64 ones, as the test's other solvers"),
    ("test_logistic.py::test_large_sparse_matrix?*-sag?",
     "as test_large_sparse_matrix[*-liblinear]"),
    ("test_logistic.py::test_large_sparse_matrix?*-saga?",
     "as test_large_sparse_matrix[*-liblinear]"),
    ("test_sag.py::test_step_size_alpha_error",
     "scikit-learn's sag cannot take a step size with step_size * alpha == 1 "
     "(ZeroDivisionError); cdlearn's methods have no step size: on this X = 0 they return "
     "coef_ = 0, the exact minimiser"),
    ("test_logistic.py::test_liblinear_with_large_values",
     "liblinear freezes above 1e30 (scikit-learn's ValueError text names it); cdlearn refuses "
     "this X (1e100) with its own ValueError naming its limit, 1e50, before any iteration"),
    ("test_logistic.py::test_newton_cholesky_fallback_to_lbfgs",
     "checks that scikit-learn's newton-cholesky falls back to its lbfgs on a singular Hessian; cdlearn's newton-cd and newton-cg converge without one (gaps 4e-45, 1e-27)"),
    ("test_logistic.py::test_warm_start?*-False-lbfgs?",
     "expects max_iter=1 (one lbfgs iteration) far from the fit; a cdlearn multinomial epoch is 20 L-BFGS iterations (iris: sum|Δcoef| 0.0037 after it, with a ConvergenceWarning)"),
    ("test_logistic.py::test_warm_start?*-False-sag?", "as test_warm_start[*-False-lbfgs]"),
    ("test_logistic.py::test_warm_start?*-False-saga?", "as test_warm_start[*-False-lbfgs]"),
    ("test_svm.py::test_linear_svm_convergence_warnings*",
     "expects LinearSVC(max_iter=2) unconverged on its 6-sample toy data; cdlearn's newton-cd has converged there (gap 2.9e-33, coef_ equal to the tol=1e-12 fit)"),
    ("test_sag.py::test_sag_multiclass_computed_correctly*",
     "compares with the test's sparse SAG after 70 epochs (class 0: coef [0.117, 0.190], "
     "b -0.47), not yet the optimum [0.6418, 1.3770], b -5.061 (lbfgs tol=1e-12), where "
     "cdlearn's fit is"),
    ("test_logistic.py::test_max_iter?*-max_iter3?",
     "expects max_iter=4 unconverged at tol=1e-15 on binary iris; cdlearn's Gram-"
     "preconditioned newton-cg has converged there (gap 8.4e-26 after 4 epochs)"),
    ("test_logistic.py::test_logistic_cv_multinomial_score*",
     "passes the substituted LogisticRegression's get_params() (with cdlearn's sampling, "
     "batch_size) into scikit-learn's private _log_reg_scoring_path"),
    ("test_ridge.py::test_lbfgs_solver_error",
     "expects Ridge(positive=True, max_iter=1) unconverged on its 2×2 X; cdlearn's ws-cd "
     "is at the optimum after 1 epoch (coef_ [0, 9.950248756e9], the closed form)"),
    ("test_ridge.py::test_n_iter",
     "n_iter_ as scikit-learn's solvers count it (None for its direct solvers); cdlearn "
     "reports the epochs of the method the name maps to"),
]


def not_applicable(key: str) -> str | None:
    """The reason the test ``<file>::<name>[<params>]`` is not applicable, or None."""
    for pattern, reason in NOT_APPLICABLE:
        if fnmatch.fnmatchcase(key, pattern):
            return reason
    return None


#: a few dozen of the most telling applicable tests (< 60 s), run by ``make test``
QUICK = [
    "test_coordinate_descent.py::test_lasso_zero",
    "test_coordinate_descent.py::test_lasso_toy",
    "test_coordinate_descent.py::test_lasso_non_float_y",
    "test_coordinate_descent.py::test_coef_shape_not_zero",
    "test_coordinate_descent.py::test_enet_multitarget",
    "test_coordinate_descent.py::test_warm_start",
    "test_coordinate_descent.py::test_lasso_readonly_data",
    "test_coordinate_descent.py::test_lasso_dual_gap",
    "test_sparse_coordinate_descent.py::test_sparse_coef",
    "test_ridge.py::test_ridge_shapes_type",
    "test_ridge.py::test_ridge_individual_penalties",
    "test_logistic.py::test_sparsify",
    "test_logistic.py::test_zero_max_iter",
    "test_coordinate_descent.py::test_sample_weight_invariance",
    "test_coordinate_descent.py::test_uniform_targets",
    "test_coordinate_descent.py::test_lasso_path_return_models_vs_new_return_gives_same_coefficients",
    "test_least_angle.py::test_lasso_lars_vs_lasso_cd",
    "test_least_angle.py::test_lasso_lars_vs_lasso_cd_ill_conditioned2",
    "test_least_angle.py::test_rank_deficient_design",
    "test_logistic.py::test_predict_2_classes",
    "test_logistic.py::test_predict_3_classes",
    "test_logistic.py::test_nan",
    "test_logistic.py::test_write_parameters",
    "test_logistic.py::test_inconsistent_input",
    "test_logistic.py::test_sample_weight_not_modified",
    "test_ridge.py::test_ridge_intercept",
    "test_ridge.py::test_ridge_vs_lstsq",
    "test_ridge.py::test_ridge_regression",
    "test_sparse_coordinate_descent.py::test_enet_toy_list_input",
    "test_sparse_coordinate_descent.py::test_enet_toy_explicit_sparse_input",
    "test_sparse_coordinate_descent.py::test_sparse_lasso_not_as_toy_dataset",
    "test_svm.py::test_linearsvc_iris",
    "test_svm.py::test_bad_input",
    "test_svm.py::test_liblinear_set_coef",
    "test_svm.py::test_weight",
    "test_sparse.py::test_linearsvc",
    "test_coordinate_descent.py::test_random_descent",
    "test_coordinate_descent.py::test_enet_float_precision",
    "test_coordinate_descent.py::test_multi_task_lasso_vs_skglm",
    "test_coordinate_descent.py::test_sparse_dense_descent_paths",
    "test_coordinate_descent.py::test_enet_sample_weight_does_not_overwrite_sample_weight",
    "test_coordinate_descent.py::test_enet_ridge_consistency",
    "test_logistic.py::test_logistic_regression_solvers_multiclass_unpenalized",
    "test_logistic.py::test_warm_start_newton_solver",
    "test_logistic.py::test_liblinear_multiclass_raises",
    "test_logistic.py::test_logistic_cv_folds_with_classes_missing",
    "test_logistic.py::test_logistic_cv_mock_scorer",
]
