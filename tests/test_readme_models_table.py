"""The README's shipped-models table is the one generated from the models' training reports."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_table_matches_training_reports():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "models_table.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_shipped_transformers_translate_the_tutorial_sentence():
    from attnkit.pretrained import shipped
    from attnkit.translator import Translator

    fr = Translator.from_checkpoint(shipped()["enfr-transformer"]).translate(["The cat sits on the mat."])[0]
    de = Translator.from_checkpoint(shipped()["ende-transformer"]).translate(["The cat sits on the mat."])[0]
    assert fr.translation == "Le chat s'assoya sur le tapis."
    assert de.translation == "Die Katze sitzt auf der Matte."
    assert abs(fr.attention.sum(1) - 1).max() < 1e-4 and fr.attention.shape[1] == len(fr.source_tokens)
