from hypothesis import given
from hypothesis import strategies as st

from pytest_toolpolicy.primitives.bm25 import BM25, split_identifier, tokenize


def test_identifiers_split_on_snake_and_camel_case():
    assert split_identifier("parseHTTPResponse_v2") == ("parse", "http", "response", "v2")
    assert split_identifier("HTTP2Server") == ("http2", "server")
    assert split_identifier("__init__") == ("init",)


def test_tokenize_keeps_the_whole_identifier_beside_its_parts():
    assert tokenize("parseHTTPResponse_v2") == [
        "parse",
        "http",
        "response",
        "v2",
        "parsehttpresponse_v2",
    ]
    assert tokenize("MemStore.remember(key)") == ["mem", "store", "memstore", "remember", "key"]


DOCS = [
    "def parse_config(text): turn key value lines into a dict",
    "class MemStore: keeps values in memory; remember forget recall",
    "def forget(self, key): drop whatever is kept under key from the store",
    "def fetch_with_retry(url): download a url, retrying on connection errors",
]


def test_the_obviously_relevant_document_ranks_first():
    bm25 = BM25([tokenize(d) for d in DOCS])
    scores = bm25.scores(tokenize("forget a key from the store"))
    assert max(scores, key=scores.__getitem__) == 2
    assert 0 not in bm25.scores(tokenize("memory"))  # no shared term, no score


def test_rare_terms_weigh_more_and_term_frequency_saturates():
    docs = [["common", "rare"], ["common"], ["common"], ["common", "common", "common", "common"]]
    bm25 = BM25(docs)
    assert bm25.idf("rare") > bm25.idf("common") > 0
    scores = bm25.scores(["common"])
    assert scores[3] > scores[1]  # more occurrences help...
    assert scores[3] < 4 * scores[1]  # ...but far less than linearly (k1)


def test_shorter_documents_win_at_equal_term_frequency():
    bm25 = BM25([["key", "pad", "pad", "pad", "pad"], ["key", "pad"], ["other"]])
    scores = bm25.scores(["key"])
    assert scores[1] > scores[0]


def test_empty_corpus_and_empty_query_score_nothing():
    assert BM25([]).scores(["x"]) == {}
    assert BM25([[], []]).scores(["x"]) == {}
    assert BM25([["x"]]).scores([]) == {}


@given(
    st.lists(st.lists(st.sampled_from("abcdef"), max_size=6), max_size=8),
    st.lists(st.sampled_from("abcdefgh"), max_size=4),
)
def test_scores_are_positive_and_only_for_documents_sharing_a_term(docs, query):
    scores = BM25(docs).scores(query)
    assert set(scores) == {i for i, doc in enumerate(docs) if set(doc) & set(query)}
    assert all(score > 0 for score in scores.values())
