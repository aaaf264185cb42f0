"""User-facing errors.

Every problem a user can cause (bad parameter, bad file, bad corpus) raises a
:class:`DPTopicError` whose message is a single line saying what is wrong and
how to fix it. The CLI prints that line and exits with status 2, never a
traceback.
"""


import os
import string
import sys

_INTERNAL = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` (called by the function that calls this) that names the first frame
    outside dptopic and scikit-learn's wrappers (``set_output`` wraps ``transform``; a search calls ``fit``): the
    user's line, however many of our own calls lie between (``fit_transform`` calls ``fit``, which calls the step
    that warns). The last frame when every frame is ours (the CLI)."""
    global _INTERNAL
    if len(_INTERNAL) == 1:
        try:
            import sklearn

            _INTERNAL = _INTERNAL + (os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,)
        except ImportError:
            pass
    f, level = sys._getframe(1), 1
    while f.f_back is not None and os.path.abspath(f.f_code.co_filename).startswith(_INTERNAL):
        f, level = f.f_back, level + 1
    return level


class DPTopicError(ValueError):
    """A user error with a one-line, actionable message."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class _Missing:
    """The value of a :class:`ParameterError` that names a parameter without refusing one value of it."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def show_value(value, spec: str = "") -> str:
    """A user's value for an error line: ``format(value, spec)`` when a spec is given, else its ``repr`` on one line,
    at most 60 characters."""
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            pass
    r = " ".join(repr(value).split())
    return r if len(r) <= 60 else r[:57] + "..."


class ParameterLine:
    """A one-line message that names parameters as data (a refused value, a warning's advice).

    A front door that sets parameters under other names (the command line's flags) writes the same line in its own
    names with :meth:`message`; nobody rewrites the text. :class:`ParameterError` is the refusal,
    :class:`ParameterWarning` the warning.

    Parameters
    ----------
    template : str
        The one-line message. Its fields (``str.format`` syntax) are:

        - ``{p}``: the name of parameter ``p`` (``n_topics``; a front door that renames it writes its own name, a
          command line its option);
        - ``{p=}``: ``p`` and its value, as Python's ``f"{p=}"`` writes it (``n_topics=1``; renamed, the name and
          the value apart, and ``no NAME`` for ``None``); a format spec may follow (``{epsilon=:g}``);
          ``{p=key}`` writes ``p`` with the value of field ``key`` (a line that shows two values of one parameter);
        - ``{value}``: the refused value alone (a spec may follow: ``{value:.3g}``);
        - any other field of ``fields`` (a bound, a count): written as given.

        Every ``{p}`` or ``{p=}`` field that is not ``value`` and not in ``fields`` names a parameter; ``{parameter}``
        is the refused parameter's name.
    parameter : str
        The refused parameter.
    value : object, optional
        The refused value (``MISSING`` when the line refuses no single value).
    values : mapping, optional
        The values of the other parameters the line writes as ``{p=}``.
    key : str, optional
        The line's name, for a front door that writes it in a sentence of its own, not only in its own names (the
        command line names its option where Python reads "pass overwrite=True"). The front door keeps its
        sentence under this key (the command line's are in ``dptopic/cli/_flag_templates.py``) and registers them
        with :func:`use_flag_templates`; :meth:`message` uses it when ``names`` renames a parameter of the line. Same
        fields as ``template``; each parameter it names is one the line names (in ``template`` or ``others``).
    flag_template : str, optional
        That sentence itself, written where the error is made: for the code of a front door (the server's).
    others : iterable of str, optional
        Parameters the line concerns besides those its fields name (a mapping: its values).
    **fields
        The template's other fields (a bound, a count, a name the user typed).

    Attributes
    ----------
    parameter : str
        The refused parameter.
    value : object
        The refused value, or ``MISSING``.
    parameters : tuple of str
        Every parameter the line names, ``parameter`` first.
    template, flag_template : str
        The message's templates (``flag_template``: None when no front door wrote one).
    key : str or None
        The line's name for a front door's own sentence.
    """

    def __init__(self, template: str, parameter: str, value=MISSING, *, values=None, key=None, flag_template=None,
                 others=(), **fields):
        self.template = template
        self.key = key
        self._flag_template = flag_template
        self.parameter = parameter
        self.value = value
        self.fields = dict(fields)
        self.values = dict(values or {})
        if value is not MISSING:
            self.values[parameter] = value
        named = list(dict.fromkeys([parameter, *(others.values() if isinstance(others, dict) else others)]))
        for text in (template, flag_template or ""):
            for _, field, _, _ in self._segments(text):
                name = self._parameter_of(field)
                if name is not None and name not in named:
                    named.append(name)
        self.parameters = tuple(named)
        if isinstance(self, BaseException):        # an error or a warning carries its line as its argument
            super().__init__(self.message())

    @property
    def flag_template(self) -> str | None:
        """The line for a caller who sets the parameters by other names (flags), when its sentence differs, not only
        its names: the one written with it, else the one a front door registered for its ``key``."""
        if self._flag_template is not None:
            return self._flag_template
        return _FLAG_TEMPLATES.get(self.key) if self.key is not None else None

    def _parameter_of(self, field):
        """The parameter a template field names, or None (``value``, a plain field, literal text)."""
        if field is None:
            return None
        name = field.split("=", 1)[0]
        if not name or name == "value" or (name in self.fields and "=" not in field):
            return None
        return self.parameter if name == "parameter" else name

    def _segments(self, template: str) -> list:
        """``string.Formatter().parse(template)``, with ``{p}={value}`` read as ``{p=}`` (the refused parameter and
        its value)."""
        parts = list(string.Formatter().parse(template))
        out = []
        for literal, field, spec, conversion in parts:
            if (field == "value" and literal == "=" and out and out[-1][1] == self.parameter
                    and not out[-1][2] and out[-1][3] is None):
                prev = out.pop()
                out.append((prev[0], self.parameter + "=", spec, None))
                continue
            if field == "value" and literal == "=" and out and out[-1][1] == "parameter":
                prev = out.pop()
                out.append((prev[0], "parameter=", spec, None))
                continue
            out.append((literal, field, spec, conversion))
        return out

    def message(self, names=None) -> str:
        """The line, each parameter written as ``names[p]`` (its flag) where ``names`` has it, else as ``p``.

        ``names[p]`` may be a pair ``(name, with_value)``: ``with_value`` (a format with ``{value}``) writes ``{p=}``,
        for a parameter set through another flag (HDP-LDA's eps_I from its clip)."""
        names = dict(names or {})
        template = self.template
        if self.flag_template is not None and any(p in names for p in self.parameters):
            template = self.flag_template
        out = []
        for literal, field, spec, conversion in self._segments(template):
            out.append(literal)
            if field is None:
                continue
            if field == "value":
                out.append(show_value(self.value, spec or ""))
            elif field in self.fields:
                v = self.fields[field]
                if conversion == "r":
                    v = repr(v)
                out.append(format(v, spec or ""))
            else:
                p = self._parameter_of(field)
                flag = names.get(p)
                with_value = None
                if isinstance(flag, tuple):     # (the name alone, the name with its value: a format with {value})
                    flag, with_value = flag
                if "=" not in field:
                    out.append(flag or p)
                    continue
                source = field.split("=", 1)[1]
                v = (self.values.get(p, MISSING) if not source else self.value if source == "value"
                     else self.fields.get(source, MISSING))
                if flag is None:
                    out.append(f"{p}=" if v is MISSING else f"{p}={show_value(v, spec or '')}")
                elif v is MISSING:
                    out.append(flag)
                elif with_value is not None:
                    out.append(with_value.format(value=_typed(v) if isinstance(v, str) else show_value(v, spec or "")))
                elif v is None:
                    out.append(f"no {flag}")
                else:
                    out.append(f"{flag} {_typed(v) if isinstance(v, str) else show_value(v, spec or '')}")
        return " ".join("".join(out).split())

    def __str__(self) -> str:
        return self.message()


_FLAG_TEMPLATES: dict = {}
"""A front door's sentences, by :class:`ParameterLine` key (:func:`use_flag_templates`)."""


def use_flag_templates(templates: dict) -> None:
    """Register a front door's sentences for the lines it writes in its own names (``{key: template}``; the command
    line registers its table, ``dptopic/cli/_flag_templates.py``, when it is imported): :meth:`ParameterLine.message`
    uses ``templates[line.key]`` when ``names`` renames a parameter of the line."""
    _FLAG_TEMPLATES.update(templates)


class ParameterError(ParameterLine, DPTopicError):
    """A refused parameter value, with the parameters it names as data (:class:`ParameterLine`): the CLI writes the
    line in its flags."""

    def __reduce__(self):
        return (_rebuild_parameter_error, (type(self), self.__dict__))


class ParameterWarning(ParameterLine, UserWarning):
    """A warning whose advice names parameters as data (:class:`ParameterLine`): ``warnings.warn(SomeWarning(template,
    parameter, ...))`` shows the line in Python's names, and the CLI writes it in its flags."""

    def __init__(self, template: str, parameter: str | None = None, value=MISSING, **kw):
        if parameter is None:       # a plain line: warnings.warn(text, category) builds the category from its text
            super().__init__(template.replace("{", "{{").replace("}", "}}"), "", value, **kw)
            self.parameters = ()
        else:
            super().__init__(template, parameter, value, **kw)


class ParameterText(str):
    """Text that names parameters as data (a note of advice, a verdict): a ``str`` in Python's names, which a front
    door that sets the parameters by other names (the command line's flags) writes in its own with :meth:`message`.

    Takes the arguments of :class:`ParameterLine` (``parameter``: the first parameter the text names)."""

    def __new__(cls, template: str, parameter: str, value=MISSING, **kw):
        line = ParameterLine(template, parameter, value, **kw)
        text = super().__new__(cls, line.message())
        text.line = line
        return text

    @property
    def parameters(self) -> tuple:
        """Every parameter the text names."""
        return self.line.parameters

    def message(self, names=None) -> str:
        """The text with each parameter written as ``names[p]`` (:meth:`ParameterLine.message`)."""
        return self.line.message(names)


def _rebuild_parameter_error(cls, state):
    err = cls.__new__(cls)
    err.__dict__.update(state)
    DPTopicError.__init__(err, err.message())
    return err


class InputTypeError(DPTopicError, TypeError):
    """Input of the wrong type (an entry of a count matrix that is not a number): a :class:`DPTopicError` that is
    also a ``TypeError``, as Python and scikit-learn raise for it."""


class UnknownParameterError(ParameterError, InputTypeError):
    """A keyword that names no parameter (``LDA(n_topic=5)``): a :class:`ParameterError` for ``parameter`` (the name
    as given, which no front door renames) that is also a ``TypeError``, as Python raises for an unexpected keyword."""


class CorruptModelError(DPTopicError):
    """A saved model directory is missing files or has inconsistent contents."""


class BudgetExceededError(DPTopicError):
    """A privacy ledger was asked to spend more than its budget."""


class SmallCorpusWarning(UserWarning):
    """Warned when, by the utility table measured on public corpora, the corpus is too small for useful topics at
    the budget: the model still trains, but its topics may be noise."""


class ForecastWarning(SmallCorpusWarning):
    """The :class:`SmallCorpusWarning` that forecasts, from the utility table, the topic quality to expect at this
    budget and corpus size (``dptopic recommend``'s figures). ``dptopic train`` says it once, before anything is spent,
    and silences this class alone in the fit: every other warning of the library reaches its stderr as Python shows
    it."""


class SeededNoiseWarning(UserWarning):
    """Warned when a private trainer or a local randomizer is given an explicit seed: whoever knows the seed can
    regenerate the noise and remove it, so the guarantee holds only while the seed stays secret. Seeds are for tests
    and reproduction; leave ``seed=None`` (fresh OS entropy) otherwise. Filter this class to silence it in tests."""


class PublicOverlapWarning(UserWarning):
    """Warned when a few documents of a public corpus (a prior's input) are also private documents, e.g. posts
    cross-posted to a public forum: they are read in the clear as public input; the private release's guarantee is
    unchanged. (A large share of them is refused.) ``dptopic.train`` says it once, naming its inputs as given."""


class DataVocabularyWarning(ParameterWarning):
    """Warned when a private trainer's vocabulary was chosen from its training documents: which words it holds is not
    covered by the guarantee (the privacy card says partial). Pass a public vocabulary, or choose one privately."""


def __getattr__(name):
    """``NotFittedError``, made on first use (importing scikit-learn here would make ``dptopic``'s command line slow
    to start): a model used before ``fit`` raises a :class:`DPTopicError` that is also scikit-learn's
    ``NotFittedError``, so ``except sklearn.exceptions.NotFittedError`` catches it as for scikit-learn's own
    estimators."""
    if name == "NotFittedError":
        from sklearn.exceptions import NotFittedError as sklearn_not_fitted

        cls = type("NotFittedError", (DPTopicError, sklearn_not_fitted), {"__module__": __name__,
                                                                         "__doc__": __getattr__.__doc__})
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _typed(text: str) -> str:
    """A string value as the user could type it back: as given when it is one plain word, else quoted with its
    control characters escaped (a bell or a newline in a name is shown, never printed)."""
    plain = text and text.isprintable() and not any(c.isspace() or c in "'\"\\" for c in text)
    return text if plain else repr(text)
