"""Analyst pages for the classifier kinds of issue 13: field-value filters and classifiers trained on another view.

Thin: the forms parse, the services (annotation/services/classifiers/field_values.py, trained.py) decide and refuse; a trained
classifier is built by a task (annotation/services/classifiers/classifier_builds.py) whose page follows its progress.
"""
from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.forms import NewClassifierNameMixin
from annotation.models import Classifier, ClassifierBuild, Corpus, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.services.classifiers.classifier_builds import classifier_build_start
from annotation.services.classifiers.field_values import (
    MetadataKey,
    classifier_create_field_values,
    corpus_metadata_keys,
    field_values_preview,
)
from annotation.services.classifiers.trained import COLUMNS, MIN_JUDGED_RETRIEVED, MIN_PER_CLASS
from core.errors import ApplicationError
from core.web import form_error


def _key_label(key: MetadataKey) -> str:
    kind = "list" if key.list_valued else "value"
    examples = ", ".join(key.examples[:3])
    return f"{key.name} ({kind}; e.g. {examples})" if examples else f"{key.name} ({kind})"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


# --- field-value filter -------------------------------------------------------------------------------


class FieldValuesForm(NewClassifierNameMixin, forms.Form):
    name = forms.CharField(max_length=200)
    field = forms.ChoiceField(label="Field", help_text="A field of the documents' metadata (read from a sample).")
    values = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="One value per line, compared exactly but ignoring case and surrounding spaces "
                  "(“@BarackObama” matches “@barackobama”, not “barackobama”). For a list-valued field, "
                  "a document is retrieved when any element matches.")

    def __init__(self, *args, keys: list[MetadataKey], **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["field"]).choices = [(k.name, _key_label(k)) for k in keys]

    def clean_values(self) -> list[str]:
        values = _lines(self.cleaned_data["values"])
        if not values:
            raise forms.ValidationError("Enter at least one value.")
        return values


@role_required(CONFIGURE)
def classifier_field_values_new(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Build a field-value filter; "Preview" shows what it would retrieve, "Create" saves it."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    keys = corpus_metadata_keys(corpus=corpus)
    creating = request.method == "POST" and "create" in request.POST
    form = FieldValuesForm(request.POST if request.method == "POST" else None, corpus=corpus, keys=keys)
    context: dict = {"corpus": corpus, "form": form, "keys": keys, "preview": None}
    if request.method == "POST":
        if not creating:
            form.errors.clear()  # preview only: no complaint about a name not chosen yet
            try:
                context["preview"] = field_values_preview(corpus=corpus, field=request.POST.get("field", ""),
                                                          values=_lines(request.POST.get("values", "")))
            except ApplicationError as exc:
                form_error(form, exc)
        elif form.is_valid():
            try:
                classifier = classifier_create_field_values(
                    corpus=corpus, name=form.cleaned_data["name"], field=form.cleaned_data["field"],
                    values=form.cleaned_data["values"])
            except ApplicationError as exc:
                form_error(form, exc)
            else:
                messages.success(request, f"Classifier “{classifier.name}” retrieves {classifier.retrieved_count} documents.")
                return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_field_values.html", context)


# --- trained classifier ------------------------------------------------------------------------------


class TrainedForm(NewClassifierNameMixin, forms.Form):
    name = forms.CharField(max_length=200)
    view_fields = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, label="Fields it reads (its view)",
        help_text="Choose fields the partner classifier does not read: the pair must be conditionally independent.")
    labels_from = forms.ChoiceField(
        label="Training labels",
        help_text=f"A topic's judged documents (at least {MIN_PER_CLASS} relevant and {MIN_PER_CLASS} not relevant), "
                  "or another classifier's output taken as noisy labels (its retrieved documents = relevant).")
    partner = forms.ChoiceField(
        required=False, label="Partner classifier",
        help_text="The classifier it will be paired with; its fields are refused. Defaults to the labelling "
                  "classifier when labels come from one.")
    threshold = forms.FloatField(initial=0.5, min_value=0.001, max_value=0.999, required=False,
                                 help_text="Documents scoring at or above it are retrieved (the threshold can be "
                                           "changed later).")
    target_precision = forms.FloatField(
        required=False, min_value=0.01, max_value=0.99, label="Or: target precision",
        help_text="Instead of a threshold: the lowest threshold whose precision on the corpus is at least this "
                  "share with 95% confidence (the most recall at that precision), estimated from the topic's "
                  "judged documents weighted by their inclusion probabilities. Refused, with the reason, when the "
                  "labels cannot support it.")
    seed = forms.IntegerField(initial=1, min_value=0, max_value=2**31 - 1,
                              help_text="Fixes the folds and the model: the same seed gives the same classifier.")

    def __init__(self, *args, keys: list[MetadataKey], topics: list[Topic], classifiers: list[Classifier], **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["view_fields"]).choices = (
            [(c, c) for c in COLUMNS] + [(k.name, _key_label(k)) for k in keys if k.name not in COLUMNS])
        cast(forms.ChoiceField, self.fields["labels_from"]).choices = (
            [(f"topic:{t.pk}", f"Judged documents of topic “{t.name}”") for t in topics]
            + [(f"classifier:{c.pk}", f"Output of classifier “{c.name}” (noisy labels)") for c in classifiers])
        cast(forms.ChoiceField, self.fields["partner"]).choices = [("", "—")] + [(str(c.pk), c.name) for c in classifiers]

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("threshold") is None and data.get("target_precision") is None and not self.errors:
            raise forms.ValidationError("Give a threshold or a target precision.")
        return data


@role_required(CONFIGURE)
def classifier_trained_new(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Check the request and start the build (a task: train, then score the corpus in shards with progress)."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    topics = list(Topic.objects.filter(corpus=corpus, archived_at__isnull=True).order_by("name"))
    classifiers = list(Classifier.objects.filter(corpus=corpus, archived_at__isnull=True).defer("retrieved_bitmap")
                       .order_by("name"))
    form = TrainedForm(request.POST if request.method == "POST" else None, corpus=corpus,
                       keys=corpus_metadata_keys(corpus=corpus), topics=topics,
                       classifiers=classifiers)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            build = classifier_build_start(
                corpus=corpus, name=data["name"], kind=Classifier.Kind.TRAINED, user=request.user,
                definition={"fields": data["view_fields"], "labels_from": data["labels_from"],
                            "partner_id": data["partner"] or None, "seed": data["seed"],
                            "threshold": data["threshold"], "target_precision": data["target_precision"]})
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            if build.status != ClassifierBuild.Status.DONE or build.classifier is None:
                return redirect("analyst:classifier_build", build_id=build.pk)
            classifier = build.classifier  # no broker: it ran in this request
            estimate = classifier.definition.get("corpus_estimate")
            if estimate:
                p = estimate["at_threshold"]["precision"]
                quality = f"precision on the corpus {p['low']:.2f}–{p['high']:.2f}"
            else:
                at = classifier.definition["cross_validation"]["at_threshold"]
                quality = ", ".join(f"{k} {at[k]:.2f}" for k in ("precision", "recall") if at[k] is not None)
                quality = (f"cross-validated on its training labels: {quality or 'no figure'}; that is agreement "
                           "with those labels, not the corpus precision")
            messages.success(request, f"Classifier “{classifier.name}” retrieves {classifier.retrieved_count} documents"
                                      f" at threshold {classifier.definition['threshold']:.2f} ({quality}).")
            return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_trained.html",
                  {"corpus": corpus, "form": form, "min_per_class": MIN_PER_CLASS,
                   "min_judged": MIN_JUDGED_RETRIEVED})
