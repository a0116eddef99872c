"""Label Studio bridge: meet annotation teams in Label Studio and bring their work back as drafts.

    bash scripts/labelstudio_server.sh start            # a local offline server (own venv), prints URL/token
    python manage.py labelstudio push GAME --url URL --token TOKEN [--kinds spans,relations,questions]
    python manage.py labelstudio pull GAME --url URL --token TOKEN [--json]

or, for managers, the page /g/<slug>/labelstudio/ (background jobs with live progress).

Modules: :mod:`.config` (the labeling config and the names push and pull share), :mod:`.client`
(the SDK, every failure as one :class:`~.client.LabelStudioError`), :mod:`.push`, :mod:`.pull`,
:mod:`.offsets` (checking Label Studio text offsets against the stored text), :mod:`.service`
(entry points), :mod:`.tasks` (jobs), :mod:`.views`, :mod:`.models` (project / task / pulled-item
mapping per game).
"""
