"""Test-session settings that must precede the first import of scipy."""

import os

# scikit-learn's array-API conformance checks run only with this set; enabling it makes
# them check that array-API dispatch on NumPy inputs leaves every estimator's results unchanged
os.environ.setdefault("SCIPY_ARRAY_API", "1")
