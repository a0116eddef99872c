"""Thin views: parse the request, call a service in ``annotate.services``, render."""
from annotate.views.chains import chain_detail, chain_list, key_statements, node_edit
from annotate.views.characters import character_script, characters
from annotate.views.games import game_create, game_list, members, span_labels, targets, workspace
from annotate.views.jobs import job_json, job_resume
from annotate.views.media import protected_media
from annotate.views.questions import draft, question_delete, question_edit, question_list
from annotate.views.reader import clue_gallery, reader, search, span_create, span_delete, span_edit, span_undo
from annotate.views.relations import label_search, relationship_delete, relationship_edit, relationships

__all__ = [
    "chain_detail", "chain_list", "character_script", "characters", "clue_gallery", "draft", "game_create",
    "game_list", "job_json", "job_resume", "key_statements", "label_search", "members", "node_edit", "protected_media", "question_delete",
    "question_edit", "question_list", "reader", "relationship_delete", "relationship_edit", "relationships",
    "search", "span_create", "span_delete", "span_edit", "span_labels", "span_undo", "targets", "workspace",
]
