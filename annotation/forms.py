"""Forms of the analyst pages. They check input shape only; services decide the rest."""
from decimal import Decimal
from typing import Any

from django import forms

from annotation import limits
from annotation.models import Classifier, Corpus, Topic
from annotation.services.classifiers.kinds import kind_get, kinds_uploaded
from annotation.services.corpora.corpus_uploads import (
    CORPUS_SUFFIXES,
    CorpusUploadRefused,
    corpus_upload_file_check,
)

KEYWORD_FIELDS = (("title", "Title"), ("text", "Text"))


def file_input(*suffixes: str) -> forms.ClearableFileInput:
    """A file input whose picker offers the types the server reads (`accept`); the server still checks.

    Browsers match `accept` on a file name's last extension, so ".jsonl.gz" is offered as ".gz".
    """
    offered = list(dict.fromkeys("." + suffix.rsplit(".", 1)[-1].lower() for suffix in suffixes))
    return forms.ClearableFileInput(attrs={"accept": ",".join(offered)})


CSV_ONLY = (".csv",)


def split_terms(raw: str) -> list[str]:
    """One term or phrase per line (commas also separate); blanks and repeats dropped, order kept."""
    terms: list[str] = []
    for line in raw.replace(",", "\n").splitlines():
        term = " ".join(line.split())
        if term and term.lower() not in {t.lower() for t in terms}:
            terms.append(term)
    return terms


class CorpusUploadForm(forms.Form):
    corpus_name = forms.CharField(max_length=200, label="Corpus name",
                                  help_text="A new name creates a corpus; an existing one adds the file's documents to it "
                                  "(the same rules as manage.py import_corpus).")
    file = forms.FileField(
        label="Corpus file", widget=file_input(*CORPUS_SUFFIXES),
        help_text="JSON Lines (one document per line) or CSV with a header row; gzip-compressed files "
        "(.jsonl.gz, .csv.gz) are read as they are.",
    )
    id_field = forms.CharField(max_length=100, initial="id", label="Id field",
                               help_text="The field holding each document's unique id.")
    text_fields = forms.CharField(max_length=300, initial="title, body", label="Text fields",
                                  help_text="Comma-separated. The first becomes the title and the others the text; a single field becomes the text.")

    def clean_corpus_name(self) -> str:
        name = self.cleaned_data["corpus_name"].strip()
        if not name:
            raise forms.ValidationError("Enter a name.")
        return name

    def clean_file(self):
        upload = self.cleaned_data["file"]
        try:
            corpus_upload_file_check(name=upload.name or "", size=upload.size)
        except CorpusUploadRefused as exc:
            raise forms.ValidationError(exc.message) from None
        return upload

    def clean_text_fields(self) -> list[str]:
        fields = [f.strip() for f in self.cleaned_data["text_fields"].split(",") if f.strip()]
        if not fields:
            raise forms.ValidationError("Name at least one text field.")
        return fields


class NewClassifierNameMixin:
    """A form for a new classifier of `corpus`: its name must be free in that corpus."""

    cleaned_data: dict[str, Any]  # provided by the forms.Form it is mixed into

    def __init__(self, *args, corpus: Corpus, **kwargs):
        super().__init__(*args, **kwargs)
        self.corpus = corpus

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if Classifier.objects.filter(corpus=self.corpus, name=name).exists():
            raise forms.ValidationError("This corpus has a classifier with this name already.")
        return name


class KeywordClassifierForm(NewClassifierNameMixin, forms.Form):
    name = forms.CharField(max_length=200)
    terms = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One term or phrase per line. A document is retrieved when any term occurs in a chosen field.",
    )
    # A form field named "fields": the form metaclass moves it into base_fields, but django-stubs
    # cannot model that and sees it replacing BaseForm.fields.
    # No field is ticked in advance (issue: a "title" filter silently read the body too): which fields a
    # keyword filter reads changes what it retrieves as much as its terms, so the analyst picks them.
    fields = forms.MultipleChoiceField(  # type: ignore[assignment]
        choices=KEYWORD_FIELDS, widget=forms.CheckboxSelectMultiple, label="Search in",
        help_text="Tick every field the terms should be looked for in; nothing is searched that is not ticked.",
        error_messages={"required": "Choose where to search: tick at least one field."},
    )

    def clean_terms(self) -> list[str]:
        terms = split_terms(self.cleaned_data["terms"])
        if not terms:
            raise forms.ValidationError("Enter at least one term.")
        return terms


class KeywordPreviewForm(forms.Form):
    """The preview needs only terms and fields; no name, so it can run while typing."""

    terms = forms.CharField(required=False)
    fields = forms.MultipleChoiceField(choices=KEYWORD_FIELDS, required=False)  # type: ignore[assignment]  # see above

    def clean_terms(self) -> list[str]:
        return split_terms(self.cleaned_data["terms"])

    def clean_fields(self) -> list[str]:
        """The ticked fields only: none ticked previews nothing (never every field in their place)."""
        return list(self.cleaned_data["fields"] or [])


class NeighbourTermsForm(forms.Form):
    seed_terms = forms.CharField(label="Seed terms", help_text="One per line.",
                                 widget=forms.Textarea(attrs={"rows": 3}))
    k = forms.IntegerField(min_value=1, max_value=100, initial=20, label="How many suggestions")
    measure = forms.ChoiceField(choices=(("jaccard", "Jaccard: shared documents over all of either"),
                                         ("overlap", "Overlap: share of the word's documents that match the seeds")),
                                initial="jaccard")

    def clean_seed_terms(self) -> list[str]:
        terms = split_terms(self.cleaned_data["seed_terms"])
        if not terms:
            raise forms.ValidationError("Enter at least one seed term.")
        return terms


def _uploaded_kinds() -> list[tuple[str, str]]:
    return [(kind.kind, kind.upload_label or kind.kind) for kind in kinds_uploaded()]


class ClassifierUploadForm(NewClassifierNameMixin, forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=_uploaded_kinds, widget=forms.RadioSelect, initial=Classifier.Kind.IDS,
                             label="What the file holds")
    # The ids and scores readers take plain UTF-8 lines (no gzip, whatever the old help text said).
    file = forms.FileField(widget=file_input(".txt", ".csv"),
                           help_text="Plain text (one id a line) or CSV (id,score), UTF-8.")
    threshold = forms.FloatField(required=False, help_text="Scores at or above the threshold count as retrieved.")

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("kind")
        if kind and kind_get(kind).has_threshold and cleaned.get("threshold") is None:
            self.add_error("threshold", "A scores file needs a threshold.")
        return cleaned


class ThresholdForm(forms.Form):
    threshold = forms.FloatField()


def _classifier_choices():
    # Choices need names only: never load the retrieved-set bitmaps (large on big corpora).
    return Classifier.objects.select_related("corpus").defer("retrieved_bitmap", "corpus__documents_bitmap")


def _classifier_label(classifier: Classifier) -> str:
    return f"{classifier.name} · {classifier.corpus.name} · {classifier.retrieved_count} retrieved"


class ClassifierChoiceField(forms.ModelChoiceField):
    """A classifier choice labelled with its corpus and retrieved count."""

    def label_from_instance(self, obj: Classifier) -> str:
        return _classifier_label(obj)


class ClassifierMultipleChoiceField(forms.ModelMultipleChoiceField):
    """Several classifiers, each labelled with its corpus and retrieved count."""

    def label_from_instance(self, obj: Classifier) -> str:
        return _classifier_label(obj)


SCORER_HELP = ("Optional: a classifier of this corpus that stores a score per document (uploaded scores or trained). "
               "The documents neither classifier of the pair retrieved are then sampled in strata by its score, "
               "which makes the recall interval that assumes nothing about the pair cheaper. It cannot change "
               "once those documents have been sampled.")


def _scorer_choices():
    """The classifiers that can be a scorer (they store scores); views narrow them to the topic's corpus."""
    return _classifier_choices().filter(kind__in=[Classifier.Kind.SCORES, Classifier.Kind.TRAINED],
                                        archived_at__isnull=True)


class TopicForm(forms.Form):
    name = forms.CharField(max_length=200)
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.defer("documents_bitmap"), empty_label=None)
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="What annotators see above every document: what counts as relevant, with an example or two.",
    )
    seed_terms = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                 help_text="Optional: the terms that define the topic, one per line (kept for reference).")
    c1 = ClassifierChoiceField(queryset=_classifier_choices(), label="First classifier of the pair")
    c2 = ClassifierChoiceField(queryset=_classifier_choices(), label="Second classifier of the pair",
                               help_text="Recall is measured from the overlap of the pair: choose two classifiers that "
                               "find relevant documents in different ways (e.g. different vocabularies). A pair in "
                               "which one classifier retrieves nothing the other does not, or that shares no "
                               "document, is refused: its recall would be 1 or 0 by construction.")
    extra = ClassifierMultipleChoiceField(queryset=_classifier_choices(), required=False,
                                          label="Further classifiers to measure",
                                          widget=forms.CheckboxSelectMultiple)
    scorer = ClassifierChoiceField(queryset=_scorer_choices(), required=False, label="Scorer (optional)",
                                   empty_label="None: sample them as one", help_text=SCORER_HELP)
    target_recall = forms.FloatField(min_value=limits.TARGET_RECALL[0], max_value=limits.TARGET_RECALL[1], initial=0.8)
    confidence = forms.FloatField(min_value=limits.CONFIDENCE[0], max_value=limits.CONFIDENCE[1], initial=0.95)
    crowd = forms.ChoiceField(choices=Topic.Crowd.choices, initial=Topic.Crowd.LOCAL)
    aggregator = forms.ChoiceField(choices=Topic.Aggregator.choices, initial=Topic.Aggregator.MAJORITY,
                                   label="Combine the three judgments by")
    hit_size = forms.IntegerField(min_value=limits.HIT_SIZE[0], max_value=limits.HIT_SIZE[1], initial=5, label="Documents per HIT")
    reward_per_hit = forms.DecimalField(min_value=limits.MONEY_MIN, max_digits=limits.REWARD_DIGITS, decimal_places=2, initial=Decimal("0.10"),
                                        label="Reward per HIT (USD)")
    budget = forms.DecimalField(min_value=limits.MONEY_MIN, max_digits=limits.BUDGET_DIGITS, decimal_places=2, required=False,
                                label="Budget (USD)", help_text="Leave empty for no limit.")
    allow_unsure = forms.BooleanField(
        required=False, label="Offer an \"unsure\" answer",
        help_text="Annotators may answer unsure. It fills their place (cost unchanged) but is left out of the "
        "majority; documents left undecided are counted in the report. It can be changed later in the settings.")

    def __init__(self, *args, instance: Topic | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance = instance


    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        others = Topic.objects.filter(name=name)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise forms.ValidationError("A topic with this name exists already.")
        return name

    def clean_seed_terms(self) -> list[str]:
        return split_terms(self.cleaned_data.get("seed_terms") or "")

    def clean(self):
        cleaned = super().clean()
        corpus, c1, c2 = cleaned.get("corpus"), cleaned.get("c1"), cleaned.get("c2")
        if c1 and c2 and c1 == c2:
            self.add_error("c2", "Choose two different classifiers.")
        for key in ("c1", "c2"):
            clf = cleaned.get(key)
            if corpus and clf and clf.corpus_id != corpus.pk:
                self.add_error(key, f"“{clf.name}” belongs to another corpus.")
        extra = cleaned.get("extra") or []
        bad = [clf.name for clf in extra if corpus and clf.corpus_id != corpus.pk]
        if bad:
            self.add_error("extra", "These belong to another corpus: " + ", ".join(bad))
        cleaned["extra"] = [clf for clf in extra if clf not in (c1, c2)]
        scorer = cleaned.get("scorer")
        if corpus and scorer and scorer.corpus_id != corpus.pk:
            self.add_error("scorer", f"“{scorer.name}” belongs to another corpus.")
        return cleaned


HALF_WIDTH_MIN, HALF_WIDTH_MAX = limits.HALF_WIDTH


MARGIN_MIN, MARGIN_MAX = limits.MARGIN


class PlanForm(forms.Form):
    half_width = forms.FloatField(min_value=HALF_WIDTH_MIN, max_value=HALF_WIDTH_MAX, initial=0.05, label="Interval half-width",
                                  help_text="How close the recall interval should be to the estimate, e.g. 0.05 for ±5 points.")
    margin = forms.FloatField(min_value=MARGIN_MIN, max_value=MARGIN_MAX, initial=0.10, required=False,
                              label="Dependence check: lower bound within",
                              help_text="How far below the recall the lower bound that assumes nothing about the "
                              "classifiers' independence may fall, e.g. 0.10.")


def _complement_field(label: str, help_text: str) -> forms.IntegerField:
    return forms.IntegerField(min_value=0, required=False, label=label, help_text=help_text)


class _ConfirmFields(forms.Form):
    """The second step of a paid action: the cost and figures the confirmation page showed (issue 12 item 5).

    Absent on the first POST, which only shows the confirmation; the view compares them with
    a fresh computation before anything is drawn.
    """

    confirm_cost = forms.DecimalField(required=False, min_value=0, decimal_places=2, widget=forms.HiddenInput)
    confirm_fingerprint = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    @property
    def confirming(self) -> bool:
        return self.cleaned_data.get("confirm_cost") is not None


class LaunchForm(_ConfirmFields):
    """The launch: the plan's half-width and the dependence check's size (empty: the plan's; 0: none).

    ``complement`` is None when empty: the view resolves it to the plan's size (annotation.services.sampling.
    complement.complement_default), as the quote does, so the default launch includes the check."""

    half_width = PlanForm.base_fields["half_width"]
    complement = _complement_field("Dependence check", "Documents neither classifier retrieved to judge; "
                                   "empty for the plan's size, 0 for none.")
    field_order = ["half_width", "complement"]


class TopUpForm(_ConfirmFields):
    half_width = forms.FloatField(min_value=HALF_WIDTH_MIN, max_value=HALF_WIDTH_MAX, initial=0.03, label="New interval half-width",
                                  help_text="Narrower than before: documents are added to every region until the plan "
                                  "for this half-width is met (already judged documents count).")
    complement = _complement_field("Dependence check (total)", "Documents neither classifier retrieved, in all "
                                   "(those already drawn count); empty for the plan's size, 0 to add none.")
    field_order = ["half_width", "complement"]


class TopicSettingsForm(forms.Form):
    """What may change after creation: the pair and the corpus stay (reports name them)."""

    instructions = TopicForm.base_fields["instructions"]
    target_recall = TopicForm.base_fields["target_recall"]
    confidence = TopicForm.base_fields["confidence"]
    crowd = TopicForm.base_fields["crowd"]
    aggregator = TopicForm.base_fields["aggregator"]
    hit_size = TopicForm.base_fields["hit_size"]
    reward_per_hit = TopicForm.base_fields["reward_per_hit"]
    budget = TopicForm.base_fields["budget"]
    allow_unsure = forms.BooleanField(
        required=False, label="Offer an \"unsure\" answer",
        help_text="Annotators may answer unsure. It fills their place (cost unchanged) but is left out of the "
        "majority; documents left undecided are counted in the report.")
    scorer = TopicForm.base_fields["scorer"]


class RenameForm(forms.Form):
    name = forms.CharField(max_length=200, label="New name")


class GoldCsvForm(forms.Form):
    """A gold CSV upload (issue 12 item 7); the size limit and the lines are checked by annotation.services.crowd.gold."""

    file = forms.FileField(label="Gold CSV file", widget=file_input(*CSV_ONLY),
                           help_text="Columns id (the document's id in the corpus) and relevant (yes/no, 1/0 or "
                           "true/false), with a header line. At most 1 MB.")


class WorkerBlockForm(forms.Form):
    reason = forms.CharField(max_length=255, label="Reason",
                             help_text="Shown to the worker and on this page.")

    def clean_reason(self) -> str:
        reason = " ".join(self.cleaned_data["reason"].split())
        if not reason:
            raise forms.ValidationError("Say why the worker is blocked.")
        return reason


# --- topic sets (issue 13 item 1, seed 002) ---------------------------------------------------------------

TOPIC_SET_MIN_CLASSES, TOPIC_SET_MAX_CLASSES = 2, 20
# Words a class may not be called: position 0 ("none of these") is every topic set's own.
RESERVED_CLASS_NAMES = {"none", "none of these", "none of the above", "unsure"}


def parse_topic_set_classes(raw: str) -> tuple[list[tuple[str, str]], list[str]]:
    """One class per line, "Name: description" (the description may be left out); blank lines skipped.

    Returns the (name, description) pairs in order and the problems, each naming its line.
    """
    classes: list[tuple[str, str]] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        name, _, description = line.partition(":")
        name, description = " ".join(name.split()), " ".join(description.split())
        if not name:
            problems.append(f"Line {number}: the class has no name (write “Name: description”).")
            continue
        if len(name) > 200:
            problems.append(f"Line {number}: the name is {len(name)} characters long; at most 200.")
            continue
        if name.isdigit():
            problems.append(f"Line {number}: “{name}” is a number; router files use numbers for class positions, "
                            "so a class needs a name with letters.")
            continue
        if name.lower() in RESERVED_CLASS_NAMES:
            problems.append(f"Line {number}: “{name}” is reserved: every topic set offers “None of these” "
                            "itself (and “unsure” when allowed).")
            continue
        if name.lower() in seen:
            problems.append(f"Line {number}: “{name}” is already the class of line {seen[name.lower()]}.")
            continue
        seen[name.lower()] = number
        classes.append((name, description))
    return classes, problems


class TopicSetForm(forms.Form):
    """A new topic set: its classes, one per line; the service decides the rest."""

    corpus = forms.ModelChoiceField(queryset=Corpus.objects.defer("documents_bitmap").order_by("name"),
                                    empty_label=None)
    name = forms.CharField(max_length=200)
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="What annotators read above every document: how to choose among the topics. Each class's "
        "description is shown under its name.")
    classes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "placeholder": "Sport: matches, players, results\n"
                                                                "Politics: elections, parliament, government"}),
        label="Classes",
        help_text=f"One class per line, “Name: description”, from {TOPIC_SET_MIN_CLASSES} to "
        f"{TOPIC_SET_MAX_CLASSES} classes, in the order annotators see them. The classes exclude one another; "
        "“None of these” is always offered as well, so do not list it.")
    allow_unsure = forms.BooleanField(
        required=False, label="Offer an \"unsure\" answer",
        help_text="It fills the annotator's place (cost unchanged) but counts for no class.")
    aggregator = forms.ChoiceField(choices=Topic.Aggregator.choices, initial=Topic.Aggregator.MAJORITY,
                                   label="Combine the three judgments by")
    hit_size = forms.IntegerField(min_value=limits.HIT_SIZE[0], max_value=limits.HIT_SIZE[1], initial=5, label="Documents per HIT")
    reward_per_hit = forms.DecimalField(min_value=limits.MONEY_MIN, max_digits=limits.REWARD_DIGITS, decimal_places=2,
                                        initial=Decimal("0.10"), label="Reward per HIT (USD)")
    budget = forms.DecimalField(min_value=limits.MONEY_MIN, max_digits=limits.BUDGET_DIGITS, decimal_places=2, required=False,
                                label="Budget (USD)", help_text="Leave empty for no limit.")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Enter a name.")
        if Topic.objects.filter(name=name).exists():
            raise forms.ValidationError("A topic with this name exists already.")
        return name

    def clean_classes(self) -> list[tuple[str, str]]:
        classes, problems = parse_topic_set_classes(self.cleaned_data["classes"])
        if problems:
            raise forms.ValidationError(problems)
        if len(classes) < TOPIC_SET_MIN_CLASSES:
            raise forms.ValidationError(f"List at least {TOPIC_SET_MIN_CLASSES} classes, one per line "
                                        f"(found {len(classes)}).")
        if len(classes) > TOPIC_SET_MAX_CLASSES:
            raise forms.ValidationError(f"A topic set has at most {TOPIC_SET_MAX_CLASSES} classes "
                                        f"(found {len(classes)}).")
        return classes


class TopicSetLaunchForm(_ConfirmFields):
    """The launch of a topic set: the total size of its uniform sample (a repeat draws only the difference)."""

    documents = forms.IntegerField(min_value=limits.TOPIC_SET_DOCUMENTS[0], max_value=limits.TOPIC_SET_DOCUMENTS[1], label="Documents in the sample (total)",
                                   help_text="A uniform sample of the corpus, each document judged by three "
                                   "annotators. Documents already drawn count towards it.")


class RouterUploadForm(forms.Form):
    name = forms.CharField(max_length=200)
    file = forms.FileField(label="Predictions (CSV)", widget=file_input(*CSV_ONLY),
                           help_text="A header line id,class, then one line per document.")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Enter a name.")
        return name

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size == 0:
            raise forms.ValidationError("The file is empty.")
        return upload


class RouterNameForm(forms.Form):
    name = forms.CharField(max_length=200, label="Router name")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Enter a name.")
        return name


class RouterRuleForm(forms.Form):
    """One class's keyword rule; rules are tried in the order given, the first that matches wins."""

    position = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    order = forms.IntegerField(min_value=1, max_value=TOPIC_SET_MAX_CLASSES, label="Order",
                               widget=forms.NumberInput(attrs={"class": "narrow"}))
    terms = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Terms",
                            help_text="One term or phrase per line; empty: no rule for this class.")
    fields = forms.MultipleChoiceField(  # type: ignore[assignment]  # see KeywordClassifierForm
        choices=KEYWORD_FIELDS, required=False, widget=forms.CheckboxSelectMultiple, label="Search in")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No field ticked in advance, whatever the view's initial says (as KeywordClassifierForm): the analyst
        # says where each class's terms are looked for; a rule never reads every field silently.
        kwargs["initial"] = {k: v for k, v in (kwargs.get("initial") or {}).items() if k != "fields"}
        super().__init__(*args, **kwargs)

    def clean_terms(self) -> list[str]:
        return split_terms(self.cleaned_data.get("terms") or "")
