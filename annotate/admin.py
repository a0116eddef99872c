"""Django admin: browse imported games, characters, questions and clues (images visible)."""
from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.utils.html import format_html

from . import models as m


def image_preview(clue: m.Clue, size: int = 120) -> str:
    if not clue.image:
        return "—"
    return format_html(
        '<a href="{0}" target="_blank"><img src="{0}" style="max-height:{1}px;max-width:{2}px" alt="{3}"></a>',
        clue.image.url, size, size * 2, clue.filename,
    )


class CharacterInline(admin.TabularInline):
    model = m.Character
    fields = ("position", "name", "aliases", "playable", "is_murderer", "is_victim", "key_role")
    extra = 0
    show_change_link = True


class ClueInline(admin.TabularInline):
    model = m.Clue
    fields = ("position", "key", "kind", "image_kind", "preview", "owner")
    readonly_fields = ("preview",)
    extra = 0
    show_change_link = True

    @admin.display(description="image")
    def preview(self, obj: m.Clue) -> str:
        return image_preview(obj, 60)


class MembershipInline(admin.TabularInline):
    model = m.Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(m.Game)
class GameAdmin(admin.ModelAdmin):
    list_display = ("title", "language", "origin", "source_id", "n_characters", "n_questions", "counterpart", "updated_at")
    list_filter = ("language", "origin")
    search_fields = ("title", "slug", "source_id")
    readonly_fields = ("content_hash", "created_at", "updated_at", "report")
    exclude = ("import_report",)
    inlines = (MembershipInline, CharacterInline, ClueInline)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("counterpart").annotate(
            _characters=Count("characters", distinct=True), _questions=Count("questions", distinct=True)
        )

    @admin.display(description="characters", ordering="_characters")
    def n_characters(self, obj: m.Game) -> int:
        return obj._characters

    @admin.display(description="questions", ordering="_questions")
    def n_questions(self, obj: m.Game) -> int:
        return obj._questions

    @admin.display(description="import report")
    def report(self, obj: m.Game) -> str:
        lines = [f"[{p.get('severity')}] {p.get('file')} {p.get('location', '')}: {p.get('message')} "
                 f"-> {p.get('action', '')}" for p in obj.import_report]
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", "\n".join(lines) or "no problems")


@admin.register(m.Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "playable", "is_murderer", "is_victim", "key_role")
    list_filter = ("playable", "is_murderer", "key_role", "game__language", "game")
    search_fields = ("name", "game__title")
    list_select_related = ("game",)


class OptionInline(admin.TabularInline):
    model = m.Option
    fields = ("position", "text", "is_correct", "origin", "model_name", "review")
    extra = 0


@admin.register(m.Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("short_stem", "game", "kind", "sub_type", "answer", "perspective", "status")
    list_filter = ("kind", "status", "game__language", "game")
    search_fields = ("stem", "game__title")
    list_select_related = ("game", "perspective")
    raw_id_fields = ("perspective", "image_clue", "chain_node", "author", "reviewer", "evidence")
    inlines = (OptionInline,)

    @admin.display(description="question")
    def short_stem(self, obj: m.Question) -> str:
        return obj.stem[:80]


@admin.register(m.Clue)
class ClueAdmin(admin.ModelAdmin):
    list_display = ("key", "game", "kind", "image_kind", "preview")
    list_filter = ("kind", "image_kind", "game")
    search_fields = ("key", "title", "text", "ocr_text")
    list_select_related = ("game",)
    readonly_fields = ("large_preview", "sha256")

    @admin.display(description="image")
    def preview(self, obj: m.Clue) -> str:
        return image_preview(obj, 80)

    @admin.display(description="image")
    def large_preview(self, obj: m.Clue) -> str:
        return image_preview(obj, 480)


@admin.register(m.Relationship)
class RelationshipAdmin(admin.ModelAdmin):
    list_display = ("source", "labels", "target", "game", "status")
    list_filter = ("status", "game")
    list_select_related = ("source", "target", "game")
    raw_id_fields = ("source", "target", "evidence", "author", "reviewer")


class ChainNodeInline(admin.TabularInline):
    model = m.ChainNode
    fields = ("position", "key", "kind", "level", "text")
    extra = 0


@admin.register(m.ReasoningChain)
class ReasoningChainAdmin(admin.ModelAdmin):
    list_display = ("title", "goal", "game", "status")
    list_filter = ("goal", "game")
    inlines = (ChainNodeInline,)


@admin.register(m.KeyStatement)
class KeyStatementAdmin(admin.ModelAdmin):
    list_display = ("owner_name", "character", "game", "text")
    list_filter = ("game",)
    list_select_related = ("character", "game")


@admin.register(m.SourceDocument)
class SourceDocumentAdmin(admin.ModelAdmin):
    list_display = ("filename", "game", "role", "media_type", "size", "sha256")
    list_filter = ("role", "game")


@admin.register(m.Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("document", "number", "method", "ocr_confidence")
    list_select_related = ("document",)


admin.site.register(m.Membership)
admin.site.register(m.EvidenceSpan)
