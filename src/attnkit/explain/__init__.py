"""How attention becomes an explanation: maps derived from a model's attention (raw, rollout, flow, norm-
and value-zeroing-weighted, gradient-weighted relevance: ``attention_maps``, computed for translators by
``translator_maps`` and for what each model provides by ``map_kinds``), gradient saliency (``saliency``)
and the HAN's attributions against which attention is judged (``attribution``, ``erasure``). How
faithful each is, is measured in ``evaluation.faithfulness``."""
