"""Loaders for the bundled real-world binary classification datasets.

Every dataset is a small numeric table with a binary class label. The loaders
return ``float64`` features and ``int64`` labels in ``{0, 1}``: the source
files encode the classes as ``-1/+1`` or ``0/1``, and the negative class
(``-1`` or ``0``) always becomes ``0`` while ``+1``/``1`` becomes ``1``.

Two families of files are bundled:

* the versions of Table 1 of the ICE (incremental cell enumeration) paper,
  with the original number of rows and duplicate rows kept: ``haberman``,
  ``caesarian``, ``cryotherapy`` and ``voicepath``;
* the versions of Table 2 of the Deep-ICE paper, deduplicated so that every
  feature vector occurs once: ``deepice_haberman``, ``deepice_caesarian``,
  ``ai4i``, ``auction_verification``, ``bloodtransfer``, ``diabetic``,
  ``rice_cammeo``, ``skin_segmentation``, ``sepsis``, ``steel_others`` and
  ``deepice_voicepath``. The Deep-ICE paper adds zero-mean Gaussian noise to
  reach general position before fitting; the bundled files are noise-free.

Attribution
-----------
The datasets come from the UCI Machine Learning Repository:

    Dua, D. and Graff, C. (2019). UCI Machine Learning Repository
    [http://archive.ics.uci.edu/ml]. Irvine, CA: University of California,
    School of Information and Computer Science.

The files are the versions distributed with the public artifacts of the seed
papers: https://github.com/XiHegrt/DeepICE-algorithm-artifacts (commit
96d10fa; ``DeepICE-CUDA/dataset/`` for Table 1 of the ICE paper and
``DeepICE-python/datasets/`` for Table 2 of the Deep-ICE paper) and, for the
two-feature voice pathology data, https://github.com/XiHegrt/E01Loss (commit
19b2a6f; ``e01loss/test/voicepath_data.csv``; He, X. and Little, M. A. (2023),
E01Loss, doi:10.5281/zenodo.7814259). The original authors of each dataset
are cited in the ``DESCR`` field returned by its loader; please cite them, and
the UCI repository, when you use the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

import numpy as np
from sklearn.utils import Bunch

_ARTIFACTS = "https://github.com/XiHegrt/DeepICE-algorithm-artifacts, commit 96d10fa"
_UCI = (
    "Dua, D. and Graff, C. (2019). UCI Machine Learning Repository "
    "[http://archive.ics.uci.edu/ml]. Irvine, CA: University of California, "
    "School of Information and Computer Science."
)

# Citations of the original dataset authors, keyed by the ``refs`` of a registry entry.
_REFERENCES = {
    "haberman": "Haberman, S. J. (1976). Generalized residuals for log-linear models. "
    "Proceedings of the 9th International Biometrics Conference, Boston, pp. 104-122. "
    "(UCI: Haberman's Survival.)",
    "caesarian": "Amin, M. Z. and Ali, A. (2018). Performance evaluation of supervised "
    "machine learning classifiers for predicting healthcare operational decisions. "
    "Wavy AI Research Foundation, Lahore, Pakistan. (UCI: Caesarian Section Classification.)",
    "cryotherapy": "Khozeimeh, F., Alizadehsani, R., Roshanzamir, M., Khosravi, A., "
    "Layegh, P. and Nahavandi, S. (2017). An expert system for selecting wart treatment "
    "method. Computers in Biology and Medicine, 81, 167-175. (UCI: Cryotherapy.)",
    "e01loss": "He, X. and Little, M. A. (2023). E01Loss: a Python library for solving the "
    "exact 0-1 loss linear classification problem. doi:10.5281/zenodo.7814259. "
    "https://github.com/XiHegrt/E01Loss",
    "ai4i": "Matzka, S. (2020). Explainable artificial intelligence for predictive "
    "maintenance applications. Third International Conference on Artificial Intelligence "
    "for Industries (AI4I), pp. 69-74. (UCI: AI4I 2020 Predictive Maintenance.)",
    "auction": "Ordoni, E., Bach, J. and Fleck, A.-K. (2022). Analyzing and predicting "
    "verification of data-aware process models - a case study with spectrum auctions. "
    "IEEE Access, 10. (UCI: Auction Verification.)",
    "blood": "Yeh, I-C., Yang, K.-J. and Ting, T.-M. (2009). Knowledge discovery on RFM "
    "model using Bernoulli sequence. Expert Systems with Applications, 36(3), 5866-5871. "
    "(UCI: Blood Transfusion Service Center.)",
    "diabetic": "Antal, B. and Hajdu, A. (2014). An ensemble-based system for automatic "
    "screening of diabetic retinopathy. Knowledge-Based Systems, 60, 20-27. "
    "(UCI: Diabetic Retinopathy Debrecen.)",
    "rice": "Cinar, I. and Koklu, M. (2019). Classification of rice varieties using "
    "artificial intelligence methods. International Journal of Intelligent Systems and "
    "Applications in Engineering, 7(3), 188-194. (UCI: Rice (Cammeo and Osmancik).)",
    "skin": "Bhatt, R. B., Sharma, G., Dhall, A. and Chaudhury, S. (2009). Efficient skin "
    "region segmentation using low complexity fuzzy decision tree model. IEEE INDICON "
    "2009. (UCI: Skin Segmentation.)",
    "sepsis": "Chicco, D. and Jurman, G. (2020). Survival prediction of patients with "
    "sepsis from age, sex, and septic episode number alone. Scientific Reports, 10, "
    "17156. (UCI: Sepsis Survival Minimal Clinical Records.)",
    "steel": "Buscema, M., Terzi, S. and Tastle, W. (2010). A new meta-classifier. "
    "NAFIPS 2010; data from Semeion Research Center of Sciences of Communication, Rome. "
    "(UCI: Steel Plates Faults.)",
}

_ICE_VERSION = "ICE paper, Table 1 version: original N, duplicate rows kept"
_DEEPICE_VERSION = (
    "Deep-ICE paper, Table 2 version: deduplicated by the Deep-ICE authors "
    "(the paper adds zero-mean Gaussian noise before fitting; this file is noise-free)"
)

_HABERMAN = ("age", "year_of_operation", "positive_axillary_nodes")
_HABERMAN_NOTE = (
    "Survival of patients who had surgery for breast cancer (University of Chicago's "
    "Billings Hospital, 1958-1970). Features: age at operation, year of operation "
    "(year - 1900), number of positive axillary nodes detected. Class: survival status "
    "five years after the operation."
)
_CAESARIAN = ("age", "delivery_number", "delivery_time", "blood_pressure", "heart_problem")
_CAESARIAN_NOTE = (
    "Caesarian section outcomes of pregnant women. Codes: delivery_time 0 = timely, "
    "1 = premature, 2 = latecomer; blood_pressure 0 = low, 1 = normal, 2 = high; "
    "heart_problem 0 = apt, 1 = inept. Class: whether a caesarian section was performed."
)
_VOICEPATH_NOTE = (
    "Voice pathology data with two numeric features, taken from the E01Loss test suite. "
    "The source does not document the feature definitions or which class is "
    "pathological, hence the generic names."
)
_STEEL = (
    "X_Minimum", "X_Maximum", "Y_Minimum", "Y_Maximum", "Pixels_Areas", "X_Perimeter",
    "Y_Perimeter", "Sum_of_Luminosity", "Maximum_of_Luminosity", "Length_of_Conveyer",
    "TypeOfSteel_A300", "TypeOfSteel_A400", "Steel_Plate_Thickness", "Edges_Index",
    "Empty_Index", "Square_Index", "Outside_X_Index", "Edges_X_Index", "Edges_Y_Index",
    "Outside_Global_Index", "LogOfAreas", "Log_X_Index", "Log_Y_Index",
    "Orientation_Index", "Luminosity_Index", "SigmoidOfAreas", "Minimum_of_Luminosity",
)
_DIABETIC = (
    ("quality", "pre_screening")
    + tuple(f"ma_{alpha}" for alpha in ("0.5", "0.6", "0.7", "0.8", "0.9", "1.0"))
    + tuple(f"exudate_{k}" for k in range(1, 9))
    + ("macula_optic_disc_distance", "optic_disc_diameter", "am_fm_classification")
)


@dataclass(frozen=True)
class _DatasetInfo:
    """Metadata of one bundled dataset (a registry entry)."""

    title: str
    file: str
    version: str  # which published version of the data this is
    origin: str  # where the bundled file was taken from (repository, commit, path)
    shape: tuple[int, int]  # N x D as published
    n_unique: int  # number of distinct feature vectors (rows of X)
    target_names: tuple[str, str]  # names of class 0 and class 1
    refs: tuple[str, ...]  # keys of _REFERENCES (original dataset authors)
    feature_names: tuple[str, ...] = ()  # empty: generic names x0, x1, ...
    note: str = ""
    optimum: int | None = None  # published exact optimum (0-1 errors), where known
    source_labels: tuple[int, int] = (-1, 1)  # labels of (class 0, class 1) in the file


def _ice(title: str, file: str, source: str, **details: Any) -> _DatasetInfo:
    """Registry entry of an ICE paper (Table 1) file of ``DeepICE-CUDA/dataset/``."""
    origin = f"{_ARTIFACTS}, DeepICE-CUDA/dataset/{source}"
    return _DatasetInfo(title, file, _ICE_VERSION, origin, **details)


def _deepice(title: str, file: str, source: str, **details: Any) -> _DatasetInfo:
    """Registry entry of a Deep-ICE paper (Table 2) file of ``DeepICE-python/datasets/``.

    Unless given, the shape is read from the source file name (``<name>_<N>_<D>D.csv``)
    and the number of distinct feature vectors is N (the files are deduplicated).
    """
    if "shape" not in details:
        match = re.fullmatch(r".*_(\d+)_(\d+)D\.csv", source)
        if match is None:
            raise ValueError(f"cannot read N and D from the file name {source!r}")
        details["shape"] = (int(match[1]), int(match[2]))
    details.setdefault("n_unique", details["shape"][0])
    origin = f"{_ARTIFACTS}, DeepICE-python/datasets/{source}"
    return _DatasetInfo(title, file, _DEEPICE_VERSION, origin, **details)


_HABERMAN_CLASSES = ("died_within_5_years", "survived_5_years_or_longer")
_CAESARIAN_CLASSES = ("no_caesarian", "caesarian")

_REGISTRY: dict[str, _DatasetInfo] = {
    # ICE paper, Table 1: original N, duplicate rows kept.
    "haberman": _ice(
        "Haberman's survival", "haberman.csv", "haberman.csv", shape=(306, 3), n_unique=283,
        optimum=66, feature_names=_HABERMAN, target_names=_HABERMAN_CLASSES,
        refs=("haberman",), note=_HABERMAN_NOTE,
    ),
    "caesarian": _ice(
        "Caesarian section", "caesarian.csv", "caesarian.csv", shape=(80, 5), n_unique=72,
        optimum=18, feature_names=_CAESARIAN, target_names=_CAESARIAN_CLASSES,
        refs=("caesarian",), note=_CAESARIAN_NOTE,
    ),
    "cryotherapy": _ice(
        "Cryotherapy", "cryotherapy.csv", "Cryotherapy.csv", shape=(90, 6), n_unique=89,
        optimum=4, feature_names=("sex", "age", "time", "number_of_warts", "type", "area"),
        target_names=("treatment_failure", "treatment_success"), refs=("cryotherapy",),
        note="Outcome of cryotherapy treatment of warts. Features: patient sex and age, "
        "months elapsed before treatment, number of warts, wart type (1 = common, "
        "2 = plantar, 3 = both) and surface area of the largest wart (mm^2).",
    ),
    "voicepath": _DatasetInfo(
        "Voice pathology (2 features)", "voicepath.csv", _ICE_VERSION,
        "https://github.com/XiHegrt/E01Loss, commit 19b2a6f, e01loss/test/voicepath_data.csv",
        shape=(704, 2), n_unique=704, optimum=19, target_names=("negative", "positive"),
        refs=("e01loss",), note=_VOICEPATH_NOTE, source_labels=(0, 1),
    ),
    # Deep-ICE paper, Table 2: deduplicated (except voicepath).
    "deepice_haberman": _deepice(
        "Haberman's survival", "deepice_haberman_283.csv", "haberman_283_3D.csv",
        feature_names=_HABERMAN, target_names=_HABERMAN_CLASSES, refs=("haberman",),
        note=_HABERMAN_NOTE,
    ),
    "deepice_caesarian": _deepice(
        "Caesarian section", "deepice_caesarian_72.csv", "caesarian_72_5D.csv",
        feature_names=_CAESARIAN, target_names=_CAESARIAN_CLASSES, refs=("caesarian",),
        note=_CAESARIAN_NOTE,
    ),
    "ai4i": _deepice(
        "AI4I 2020 predictive maintenance (machine failure)", "deepice_ai4i_10000.csv",
        "ai4i_MF_10000_6D.csv", source_labels=(0, 1), refs=("ai4i",),
        feature_names=("product_type", "air_temperature_K", "process_temperature_K",
                       "rotational_speed_rpm", "torque_Nm", "tool_wear_min"),
        target_names=("no_failure", "machine_failure"),
        note="Synthetic milling-machine data. product_type is coded 1 = M, 2 = L, 3 = H "
        "(product quality variant). The identifier columns and the five failure-mode flags "
        "are not included; the class is the 'machine failure' flag.",
    ),
    "auction_verification": _deepice(
        "Auction verification", "deepice_auction_verification_2043.csv",
        "auction_verification_2043_7D.csv", refs=("auction",),
        feature_names=tuple(f"process_b{k}_capacity" for k in range(1, 5))
        + ("property_price", "property_product", "property_winner"),
        target_names=("verification_false", "verification_true"),
        note="Verification runs of a simulated spectrum auction process model. The class "
        "is the verification result; the verification time column is not included.",
    ),
    "bloodtransfer": _deepice(
        "Blood transfusion service center", "deepice_bloodtransfer_502.csv",
        "bloodtransfer_502_4D.csv", target_names=("not_donated", "donated"), refs=("blood",),
        feature_names=("recency_months", "frequency_times", "monetary_cc_blood", "time_months"),
        note="Donor database of the Blood Transfusion Service Center in Hsin-Chu City, "
        "Taiwan (RFM model). Class: whether the donor gave blood in March 2007.",
    ),
    "diabetic": _deepice(
        "Diabetic retinopathy Debrecen", "deepice_diabetic_1146.csv", "diabetic_1146_19D.csv",
        feature_names=_DIABETIC, target_names=("no_dr_signs", "dr_signs"), refs=("diabetic",),
        note="Features extracted from Messidor retinal images: image quality and "
        "pre-screening flags, microaneurysm counts at confidence levels 0.5-1.0, "
        "exudate measures, macula-optic disc distance, optic disc diameter and an "
        "AM/FM-based classification flag. Class: signs of diabetic retinopathy.",
    ),
    "rice_cammeo": _deepice(
        "Rice (Cammeo and Osmancik)", "deepice_rice_cammeo_3810.csv", "rice_cammeo_3810_7D.csv",
        feature_names=("area", "perimeter", "major_axis_length", "minor_axis_length",
                       "eccentricity", "convex_area", "extent"),
        target_names=("Cammeo", "Osmancik"), refs=("rice",),
        note="Morphological features of rice grain images; the class is the variety.",
    ),
    "skin_segmentation": _deepice(
        "Skin segmentation", "deepice_skin_segmentation_51433.csv",
        "skin_segmentation_51433_3D.csv", feature_names=("blue", "green", "red"),
        target_names=("non_skin", "skin"), refs=("skin",),
        note="B, G, R values of pixels sampled from face images (skin) and other images "
        "(non-skin); the UCI table has 245057 rows, of which 51433 are distinct.",
    ),
    "sepsis": _deepice(
        "Sepsis survival minimal clinical records", "deepice_spesis_975.csv",
        "spesis_975_3D.csv", feature_names=("age_years", "sex", "episode_number"),
        target_names=("dead", "alive"), refs=("sepsis",),
        note="Hospital outcome of sepsis episodes (sex: 0 = male, 1 = female). The "
        "deduplication of the large primary cohort keeps 975 distinct feature vectors; "
        "how conflicting labels were resolved is not documented by the source.",
    ),
    "steel_others": _deepice(
        "Steel plates faults (Other_Faults vs rest)", "deepice_steel_others_1941.csv",
        "steel_Others_1941_27D.csv", feature_names=_STEEL, refs=("steel",),
        target_names=("not_other_faults", "other_faults"),
        note="Geometric and luminosity features of steel plate surface faults. The class "
        "is 'Other_Faults' against the six other fault types. In the source file the "
        "Minimum_of_Luminosity column comes last (it is at most Maximum_of_Luminosity "
        "in every row).",
    ),
    "deepice_voicepath": _deepice(
        "Voice pathology (2 features)", "deepice_voicepath_707.csv", "voicepath_data.csv",
        shape=(707, 2), n_unique=704, target_names=("negative", "positive"),
        refs=("e01loss",),
        note=_VOICEPATH_NOTE + " Unlike the other Deep-ICE files this one is not "
        "deduplicated: it has 707 rows of which 704 are distinct.",
    ),
}


class _DatasetLoader(Protocol):
    """Call signature shared by the ``load_*`` functions."""

    def __call__(self, *, return_X_y: bool = False) -> Bunch | tuple[np.ndarray, np.ndarray]:
        ...


def _feature_names(info: _DatasetInfo) -> list[str]:
    if info.feature_names:
        return list(info.feature_names)
    return [f"x{i}" for i in range(info.shape[1])]


def _read_table(file: str) -> np.ndarray:
    """Read a bundled CSV file (no header, comma separated) as a 2-D float64 array."""
    resource = resources.files("exactclf.datasets").joinpath("data").joinpath(file)
    with resource.open("r", encoding="ascii") as handle:
        return np.loadtxt(handle, delimiter=",", dtype=np.float64, ndmin=2)


def _source_labels(info: _DatasetInfo) -> str:
    """The class labels of the source file, e.g. ``"-1 and +1"``."""
    negative, positive = info.source_labels
    return f"{negative} and {'+' if negative < 0 else ''}{positive}"


def _binary_labels(labels: np.ndarray, info: _DatasetInfo) -> np.ndarray:
    """Map the source labels (-1/+1 or 0/1) to int64 labels: negative -> 0, positive -> 1."""
    found = set(np.unique(labels).tolist())
    if found != set(info.source_labels):
        raise ValueError(f"{info.file}: expected class labels {_source_labels(info)}, "
                         f"found {sorted(found)}")
    return (labels == info.source_labels[1]).astype(np.int64)


def _describe(info: _DatasetInfo, X: np.ndarray, y: np.ndarray) -> str:
    """Build the reStructuredText ``DESCR`` of a dataset."""
    n_samples, n_features = info.shape
    counts = np.bincount(y, minlength=2)
    classes = ", ".join(
        f"{label} = {name} ({count} samples)"
        for label, (name, count) in enumerate(zip(info.target_names, counts, strict=True))
    )
    optimum = (
        f":Published exact optimum: {info.optimum} misclassified samples (0-1 loss of a "
        "linear classifier, ICE paper, Table 1)\n"
        if info.optimum is not None
        else ""
    )
    n_rows = len(np.unique(np.column_stack([X, y]), axis=0))
    references = "\n".join(f"- {_REFERENCES[key]}" for key in info.refs)
    return (
        f"{info.title} dataset\n{'-' * (len(info.title) + 8)}\n\n"
        "**Data Set Characteristics:**\n\n"
        f":Number of Instances: {n_samples}\n"
        f":Number of Features: {n_features} (numeric)\n"
        f":Distinct feature vectors: {info.n_unique} ({n_rows} distinct rows with the label)\n"
        f":Classes: {classes}\n"
        f":Label mapping: source labels {_source_labels(info)} become 0 and 1\n"
        f":Feature names: {', '.join(_feature_names(info))}\n"
        f"{optimum}"
        f":Version: {info.version}\n\n"
        f"{info.note}\n\n"
        f"The bundled file {info.file} is a byte copy of {info.origin}.\n\n"
        "References\n----------\n"
        f"- {_UCI}\n{references}\n"
    )


def _load(name: str, return_X_y: bool) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load the registry entry ``name`` as ``(X, y)`` or as a :class:`~sklearn.utils.Bunch`."""
    info = _REGISTRY[name]
    table = _read_table(info.file)
    if table.shape != (info.shape[0], info.shape[1] + 1):
        raise ValueError(f"{info.file}: expected {info.shape[0]} rows and "
                         f"{info.shape[1] + 1} columns, found {table.shape}")
    X = np.ascontiguousarray(table[:, :-1])
    y = _binary_labels(table[:, -1], info)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        feature_names=_feature_names(info),
        target_names=np.array(info.target_names),
        DESCR=_describe(info, X, y),
        source=info.origin,
        filename=info.file,
    )


_LOADER_DOC = """Load the {title} dataset ({version_short} paper version).

{n} samples, {d} features ({n_unique} distinct feature vectors) and two classes:
0 = ``{t0}``, 1 = ``{t1}``.
The source file labels the classes {source_labels}; the negative class becomes 0.{optimum}

See the ``DESCR`` field of the returned Bunch for the description, the
provenance and the citations (UCI repository and original dataset authors).

Parameters
----------
return_X_y : bool, default=False
    If True, return ``(data, target)`` instead of a Bunch object.

Returns
-------
data : :class:`~sklearn.utils.Bunch`
    Dictionary-like object with the following attributes.

    data : ndarray of shape ({n}, {d}), dtype float64
        The feature matrix.
    target : ndarray of shape ({n},), dtype int64
        The class labels, 0 or 1.
    feature_names : list of str
        The names of the {d} feature columns.
    target_names : ndarray of shape (2,)
        The names of class 0 and class 1.
    DESCR : str
        The full description of the dataset, with references.
    source : str
        Where the bundled file was taken from (repository, commit, path).
    filename : str
        The name of the bundled CSV file.

(data, target) : tuple of ndarray
    Returned instead of the Bunch when ``return_X_y`` is True: ``data`` of
    shape ({n}, {d}) and ``target`` of shape ({n},).

See Also
--------
load_dataset : Load any bundled dataset by name.
list_datasets : Names of all bundled datasets.

Examples
--------
>>> from exactclf.datasets import {func}
>>> bunch = {func}()
>>> bunch.data.shape
({n}, {d})
>>> bunch.target_names.tolist()
['{t0}', '{t1}']
>>> X, y = {func}(return_X_y=True)
>>> sorted(set(y.tolist()))
[0, 1]
"""


def _make_loader(name: str) -> _DatasetLoader:
    """Create the public ``load_<name>`` function of a registry entry."""
    info = _REGISTRY[name]

    def loader(*, return_X_y: bool = False) -> Bunch | tuple[np.ndarray, np.ndarray]:
        return _load(name, return_X_y)

    loader.__name__ = loader.__qualname__ = f"load_{name}"
    loader.__doc__ = _LOADER_DOC.format(
        title=info.title,
        version_short="ICE" if info.version == _ICE_VERSION else "Deep-ICE",
        n=info.shape[0],
        d=info.shape[1],
        n_unique=info.n_unique,
        t0=info.target_names[0],
        t1=info.target_names[1],
        optimum=(
            "\n\nThe published exact optimum of the 0-1 loss of a linear classifier\n"
            f"(ICE paper, Table 1) is {info.optimum} misclassified samples."
            if info.optimum is not None
            else ""
        ),
        source_labels=_source_labels(info),
        func=f"load_{name}",
    )
    return loader


def list_datasets() -> list[str]:
    """Return the names of the bundled datasets.

    Returns
    -------
    names : list of str
        The names accepted by :func:`load_dataset`; ``load_dataset(name)`` is
        the same as ``load_<name>()``.

    Examples
    --------
    >>> from exactclf.datasets import list_datasets
    >>> names = list_datasets()
    >>> names[:4]
    ['haberman', 'caesarian', 'cryotherapy', 'voicepath']
    >>> len(names)
    15
    """
    return list(_REGISTRY)


def published_optima() -> dict[str, int]:
    """Return the published exact optima of the ICE paper's Table 1 datasets.

    The single source of these figures in exactclf: experiments, the demo and the tests read
    them from here.

    Returns
    -------
    optima : dict of str to int
        Dataset name (as accepted by :func:`load_dataset`) to the minimum number of training
        samples a linear classifier misclassifies (0-1 loss) on that file, as published in
        Table 1 of the ICE paper; datasets without a published optimum are left out.

    Examples
    --------
    >>> from exactclf.datasets import published_optima
    >>> published_optima()
    {'haberman': 66, 'caesarian': 18, 'cryotherapy': 4, 'voicepath': 19}
    """
    return {name: info.optimum for name, info in _REGISTRY.items() if info.optimum is not None}


def load_dataset(name: str, *, return_X_y: bool = False) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load a bundled dataset by name.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`. Case and hyphens are ignored, so
        ``"Rice-Cammeo"`` is the same as ``"rice_cammeo"``.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch object.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the fields ``data``, ``target``,
        ``feature_names``, ``target_names``, ``DESCR``, ``source`` and
        ``filename``; see the ``load_<name>`` function of the dataset.
    (data, target) : tuple of ndarray
        Returned instead of the Bunch when ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If ``name`` is not a bundled dataset.

    Examples
    --------
    >>> from exactclf.datasets import load_dataset
    >>> X, y = load_dataset("caesarian", return_X_y=True)
    >>> X.shape, y.shape
    ((80, 5), (80,))
    >>> load_dataset("DeepICE-Caesarian").data.shape
    (72, 5)
    """
    key = name.strip().lower().replace("-", "_")
    if key not in _REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(_REGISTRY)}")
    return _load(key, return_X_y)


load_haberman = _make_loader("haberman")
load_caesarian = _make_loader("caesarian")
load_cryotherapy = _make_loader("cryotherapy")
load_voicepath = _make_loader("voicepath")
load_deepice_haberman = _make_loader("deepice_haberman")
load_deepice_caesarian = _make_loader("deepice_caesarian")
load_ai4i = _make_loader("ai4i")
load_auction_verification = _make_loader("auction_verification")
load_bloodtransfer = _make_loader("bloodtransfer")
load_diabetic = _make_loader("diabetic")
load_rice_cammeo = _make_loader("rice_cammeo")
load_skin_segmentation = _make_loader("skin_segmentation")
load_sepsis = _make_loader("sepsis")
load_steel_others = _make_loader("steel_others")
load_deepice_voicepath = _make_loader("deepice_voicepath")
