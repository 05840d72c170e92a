"""Install gradacc_compat.

TensorFlow is deliberately not a hard requirement: users already have one of
``tensorflow``, ``tensorflow-cpu`` or ``tensorflow-gpu`` and a hard requirement
would install a second TensorFlow beside it.  The extras are a convenience.
"""
import io
import os
import re

from setuptools import find_packages, setup

HERE = os.path.abspath(os.path.dirname(__file__))


def read_version():
    with io.open(os.path.join(HERE, "gradacc_compat", "_version.py"), encoding="utf-8") as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def read_readme():
    with io.open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        return f.read()


setup(
    name="gradacc_compat",
    version=read_version(),
    description="Exact gradient accumulation for TensorFlow 1.14 to 2.x, one API",
    long_description=read_readme(),
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "tests.*")),
    # Top level, so that pytest loading it does not import the package (and
    # TensorFlow) in test sessions that never use it.
    py_modules=["pytest_gradacc_compat"],
    python_requires=">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*, !=3.5.*, !=3.6.*",
    install_requires=["six"],
    extras_require={
        "tf": ["tensorflow"],
        "tf-cpu": ["tensorflow-cpu"],
        "test": ["pytest"],
        "bench": ["matplotlib"],  # the benchmark's --png plot
    },
    # The pytest plugin is inert unless a test uses its fixtures.
    entry_points={"pytest11": ["gradacc_compat = pytest_gradacc_compat"],
                  "console_scripts": ["gradacc-lint = gradacc_compat.lint:main"],
                  "flake8.extension": ["GAC = gradacc_compat.lint.flake8_plugin:Plugin"]},
    classifiers=[
        "Programming Language :: Python :: 2.7",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
