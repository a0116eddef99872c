"""Annotation web app URLs (the game's pages live under /g/<slug>/)."""
from django.urls import path

from . import views

app_name = "annotate"
urlpatterns = [
    path("", views.game_list, name="game_list"),
    path("games/new/", views.game_create, name="game_create"),
    path("jobs/<int:pk>.json", views.job_json, name="job_json"),
    path("jobs/<int:pk>/resume/", views.job_resume, name="job_resume"),
    path("g/<str:slug>/", views.workspace, name="workspace"),
    path("g/<str:slug>/targets/", views.targets, name="targets"),
    path("g/<str:slug>/members/", views.members, name="members"),
    path("g/<str:slug>/read/", views.reader, name="reader"),
    path("g/<str:slug>/search/", views.search, name="search"),
    path("g/<str:slug>/clues/", views.clue_gallery, name="clues"),
    path("g/<str:slug>/spans/new/", views.span_create, name="span_create"),
    path("g/<str:slug>/spans/<int:pk>/", views.span_edit, name="span_edit"),
    path("g/<str:slug>/spans/<int:pk>/delete/", views.span_delete, name="span_delete"),
    path("g/<str:slug>/spans/undo/<int:entry>/", views.span_undo, name="span_undo"),
    path("g/<str:slug>/span-labels/", views.span_labels, name="span_labels"),
    path("g/<str:slug>/characters/", views.characters, name="characters"),
    path("g/<str:slug>/characters/<int:pk>/script/", views.character_script, name="character_script"),
    path("g/<str:slug>/questions/", views.question_list, name="question_list"),
    path("g/<str:slug>/questions/new/", views.question_edit, name="question_new"),
    path("g/<str:slug>/questions/<int:pk>/", views.question_edit, name="question_edit"),
    path("g/<str:slug>/questions/<int:pk>/delete/", views.question_delete, name="question_delete"),
    path("g/<str:slug>/drafts/<str:key>/", views.draft, name="draft"),
    path("g/<str:slug>/relationships/", views.relationships, name="relationships"),
    path("g/<str:slug>/relationships/<int:pk>/", views.relationship_edit, name="relationship_edit"),
    path("g/<str:slug>/relationships/<int:pk>/delete/", views.relationship_delete, name="relationship_delete"),
    path("g/<str:slug>/labels/", views.label_search, name="label_search"),
    path("g/<str:slug>/chains/", views.chain_list, name="chain_list"),
    path("g/<str:slug>/chains/<int:pk>/", views.chain_detail, name="chain_detail"),
    path("g/<str:slug>/chains/<int:pk>/nodes/<int:node_pk>/", views.node_edit, name="node_edit"),
    path("g/<str:slug>/key-statements/", views.key_statements, name="key_statements"),
]
