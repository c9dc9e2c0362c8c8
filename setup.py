import shlex
from configparser import ConfigParser

import setuptools

# all settings live in settings.ini; edit there, not here
config = ConfigParser(delimiters=["="])
config.read("settings.ini", encoding="utf-8")
cfg = config["DEFAULT"]

cfg_keys = "version description keywords author author_email".split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected:
    assert o in cfg, f"missing expected setting: {o}"
setup_cfg = {o: cfg[o] for o in cfg_keys}

licenses = {"apache2": "Apache-2.0", "mit": "MIT", "gpl2": "GPL-2.0-only", "gpl3": "GPL-3.0-only", "bsd3": "BSD-3-Clause"}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable", "6 - Mature", "7 - Inactive"]
py_versions = "3.10 3.11 3.12 3.13 3.14".split()

requirements = shlex.split(cfg.get("requirements", ""))
dev_requirements = shlex.split(cfg.get("dev_requirements", ""))
min_python = cfg["min_python"]
package_data = {cfg["lib_name"]: cfg.get("package_data", "").split()}

setuptools.setup(
    name=cfg["lib_name"],
    license=licenses.get(cfg["license"].lower(), cfg["license"]),
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"])],
        "Intended Audience :: " + cfg["audience"],
        "Natural Language :: " + cfg["language"].title(),
    ]
    + ["Programming Language :: Python :: " + o for o in py_versions[py_versions.index(min_python) :]],
    url=cfg["git_url"],
    project_urls={"Source": cfg["git_url"]},
    packages=setuptools.find_namespace_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]),
    package_data=package_data,
    include_package_data=True,
    install_requires=requirements,
    extras_require={"dev": dev_requirements, "deepspeed": ["deepspeed>=0.19.8"]},
    python_requires=">=" + min_python,
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    zip_safe=False,
    entry_points={
        "console_scripts": cfg.get("console_scripts", "").split(),
        "nbdev": [f"{cfg.get('lib_path')}={cfg.get('lib_path')}._modidx:d"],
    },
    **setup_cfg,
)
