from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review workflow"

    def ready(self) -> None:
        # The state machine lives in the domain (annotate.services.states) and cannot import this
        # app; it announces reasons, and review keeps them as comments.
        from annotate.services.states import reason_given

        from .models import comment_on_reason

        reason_given.connect(comment_on_reason, dispatch_uid="review.comment_on_reason")
