"""The 40 questions of the retrieval demo, with the sentences that answer them.

Each answerable question names the article(s) whose sentence answers it (planted there by
:func:`.corpus.write_documents`), and may name related sentences: on its subject, without the
answer (an assessor would call a passage holding one partially relevant). Four questions have no
answer anywhere in the help centre (tag ``no-answer``): every passage is non-relevant for them, so
an honest evaluation leaves them out and says so.

Tags: one question type (``factoid``, ``how-to``, ``numeric``, ``policy``) and, for answerable
questions, the wording: ``lexical`` (the question uses the answer's words, where BM25 is at home)
or ``paraphrase`` (it says the same thing in other words, where a model of meaning is).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """``text[start:end]`` of document ``docid``."""

    docid: str
    start: int
    end: int


@dataclass(frozen=True)
class RagQuestion:
    qid: str
    text: str
    tags: tuple[str, ...]
    answers: tuple[Span, ...]  # the sentences that answer it (none: no answer in the corpus)
    related: tuple[Span, ...] = ()  # sentences on its subject that do not answer it


@dataclass(frozen=True)
class Fact:
    """A question as written: its answers and related sentences named by article key."""

    qid: str
    tags: tuple[str, ...]
    question: str
    answers: tuple[tuple[str, str], ...]  # (article key, answering sentence)
    related: tuple[tuple[str, str], ...] = ()  # (article key, sentence on the subject)


_RATE_LIMIT = (
    "Each access token may send up to 600 requests per minute, the default API rate limit."
)

# fmt: off
FACTS: tuple[Fact, ...] = (
    Fact("q01", ("numeric", "lexical"), "How many days after the invoice date is payment due?",
         (("invoices", "Payment is due 30 days after the invoice date."),),
         (("failed-payments", "An invoice that is still unpaid 14 days after its due date leads "
           "to a suspended account."),)),
    Fact("q02", ("how-to", "paraphrase"), "How do I get a PDF copy of an earlier bill?",
         (("invoices", "To download a past invoice, open the Billing page, pick the month and "
           "choose Download PDF."),),
         (("billing-contacts", "Billing contacts receive each new invoice by email as soon as it "
           "is issued."),)),
    Fact("q03", ("policy", "paraphrase"),
         "Will I get my money back if I stop my subscription early?",
         (("refunds", "When you cancel a subscription, the unused days are refunded to the "
           "original card within ten business days."),),
         (("plans", "A downgrade takes effect at the start of the next billing cycle."),)),
    Fact("q04", ("factoid", "lexical"), "Which payment methods are accepted?",
         (("payment-methods", "Northwind Cloud accepts Visa, Mastercard, American Express and "
           "SEPA direct debit."),),
         (("payment-methods", "Payment by bank transfer is possible on annual Enterprise "
           "contracts only."),)),
    Fact("q05", ("numeric", "lexical"), "How many times are failed card payments retried?",
         (("failed-payments", "A failed card payment is retried three times, on the first, "
           "fourth and seventh day after the first attempt."),)),
    Fact("q06", ("policy", "paraphrase"), "Do promotional vouchers run out?",
         (("credits", "Promotional credits expire twelve months after they are added to your "
           "account."),),
         (("credits", "Credits are used up before your card is charged for an invoice."),)),
    Fact("q07", ("how-to", "lexical"), "How do I set up spending alerts?",
         (("budgets", "To set up a spending alert, open Budgets, enter a monthly amount and "
           "choose who receives the alert."),),
         (("budgets", "Spending alerts do not stop resources from running when the amount is "
           "exceeded."),)),
    Fact("q08", ("how-to", "lexical"), "How do I reset my password?",
         (("passwords", "To reset your password, choose Forgot password on the sign-in page and "
           "follow the link in the email we send you."),),
         (("account-recovery", "If you can no longer read the email address on your account, "
           "contact support to recover it."),)),
    Fact("q09", ("no-answer",), "Do you offer a discount for non-profit organisations?", ()),
    Fact("q10", ("how-to", "paraphrase"),
         "What can I do if I lost the phone I use for two-step login?",
         (("two-factor", "If your second-factor device is gone, sign in with one of the recovery "
           "codes you saved when you turned on two-factor authentication."),),
         (("account-recovery", "Support can remove two-factor authentication from an account "
           "after verifying the owner's identity."),)),
    Fact("q11", ("numeric", "paraphrase"),
         "Once I shut down my account, how long until my files are wiped?",
         (("closing-account", "After an account is closed, its data is kept for 30 days and then "
           "permanently erased."),
          ("data-retention", "Data belonging to a closed account is deleted for good 30 days "
           "after the closure.")),),
    Fact("q12", ("factoid", "lexical"), "Which roles can invite new members?",
         (("members", "Only organisation owners and admins can invite new members."),),
         (("members", "Members with the Viewer role can read resources but cannot change "
           "them."),)),
    Fact("q13", ("how-to", "paraphrase"),
         "How do I let my staff log in with our Okta identity provider?",
         (("single-sign-on", "To enable single sign-on, upload the SAML metadata of your "
           "identity provider under Organisation settings and verify your domain."),)),
    Fact("q14", ("factoid", "lexical"), "Which encryption algorithm is used for data at rest?",
         (("encryption-at-rest", "All data at rest is encrypted with AES-256, using keys managed "
           "by Northwind Cloud unless you bring your own."),),
         (("encryption-in-transit", "Traffic to the API is encrypted in transit with TLS 1.2 or "
           "later."),)),
    Fact("q15", ("how-to", "lexical"), "How are API keys rotated?",
         (("api-keys", "To rotate an API key, create a new key, update your applications, then "
           "revoke the old key."),),
         (("tokens", "Access tokens issued from an API key stop working as soon as the key is "
           "revoked."),)),
    Fact("q16", ("numeric", "paraphrase"),
         "For how long is the audit history of user actions kept?",
         (("audit-logs", "Audit events are retained for 400 days on the Business plan and 90 days "
           "on other plans."),)),
    Fact("q17", ("factoid", "lexical"), "Does Northwind Cloud have a SOC 2 report?",
         (("compliance", "Northwind Cloud holds a SOC 2 Type II report, which customers on paid "
           "plans can request from the Trust Centre."),)),
    Fact("q18", ("policy", "paraphrase"),
         "Can we block console logins from addresses outside our office?",
         (("ip-allowlists", "An IP allowlist limits console access to the address ranges you "
           "enter, and sign-ins from anywhere else are refused."),)),
    Fact("q19", ("no-answer",), "Is there a mobile app for iPhone?", ()),
    Fact("q20", ("numeric", "paraphrase"),
         "After how much idle time am I signed out of the console?",
         (("sessions", "Console sessions end after 12 hours without activity."),)),
    Fact("q21", ("policy", "paraphrase"), "Can I keep my company's data stored inside the EU?",
         (("data-residency", "Projects created in the Frankfurt or Dublin region have their data "
           "stored only in Europe."),)),
    Fact("q22", ("how-to", "lexical"), "How is versioning enabled on buckets?",
         (("versioning", "To enable versioning, open the bucket's Properties tab and switch on "
           "Object versioning."),),
         (("versioning", "Every older version of an object in a bucket is billed as stored "
           "data."),)),
    Fact("q23", ("factoid", "paraphrase"),
         "Which storage class is cheapest for archives we seldom look at?",
         (("storage-classes", "The Cold storage class has the lowest price per gigabyte and suits "
           "data that is rarely read."),)),
    Fact("q24", ("numeric", "lexical"), "What is the maximum size for uploading a single file?",
         (("uploads", "A single upload can be at most 5 GB, and larger files must use multipart "
           "upload."),),
         (("request-size", "Uploads sent through the API are limited to 10 MB per request."),)),
    Fact("q25", ("how-to", "paraphrase"),
         "How do I bring back objects I removed from buckets by mistake?",
         (("restore", "To recover an object deleted by accident, open the bucket's Deleted items "
           "view and choose Restore within seven days."),)),
    Fact("q26", ("numeric", "lexical"), "How often are automatic snapshots taken?",
         (("snapshots", "Automatic snapshots are taken every 24 hours and kept for seven "
           "days."),),
         (("snapshots", "You can also take a manual snapshot at any time from the volume's "
           "menu."),)),
    Fact("q27", ("policy", "lexical"), "Does cross-region replication copy existing objects?",
         (("replication", "Cross-region replication copies only objects written after the rule "
           "is created, so existing objects are not copied."),)),
    Fact("q28", ("numeric", "lexical"), "What is the API rate limit per minute?",
         (("rate-limits", _RATE_LIMIT),),
         (("rate-limits", "Enterprise customers can ask for a higher limit through their account "
           "manager."),)),
    Fact("q29", ("no-answer",), "How do I connect Northwind Cloud to Salesforce?", ()),
    Fact("q30", ("factoid", "paraphrase"),
         "Why are my API calls throttled, and how long should I wait?",
         (("errors", "A 429 status code means you have exceeded the rate limit, and the "
           "Retry-After header says how long to wait."),),
         (("rate-limits", _RATE_LIMIT),)),
    Fact("q31", ("how-to", "paraphrase"),
         "How can I stop a retried request from charging a customer twice?",
         (("idempotency", "Send an Idempotency-Key header with a unique value, so that a request "
           "sent twice is carried out only once."),)),
    Fact("q32", ("factoid", "lexical"), "Are webhook payloads signed?",
         (("webhooks", "Every webhook payload is signed with HMAC-SHA256, and the signature is "
           "sent in the Northwind-Signature header."),)),
    Fact("q33", ("numeric", "lexical"),
         "What service credit do I get if uptime falls below the SLA?",
         (("sla", "If monthly uptime falls below 99.9 percent, you receive a service credit of "
           "10 percent of that month's bill."),)),
    Fact("q34", ("how-to", "paraphrase"),
         "Is there a status page that shows if something is broken right now?",
         (("status-page", "Current incidents and their updates are posted on "
           "status.northwind.example."),),
         (("incidents", "While an outage lasts, we post an update at least every 30 "
           "minutes."),)),
    Fact("q35", ("policy", "paraphrase"), "Do you warn customers in advance of planned downtime?",
         (("maintenance", "Scheduled maintenance is announced at least five days in advance by "
           "email and on the status page."),)),
    Fact("q36", ("factoid", "lexical"), "Which regions offer GPU instances?",
         (("gpus", "GPU instances are available in the Frankfurt, Virginia and Singapore "
           "regions."),),
         (("regions", "Not every instance type is offered in every region."),)),
    Fact("q37", ("how-to", "paraphrase"),
         "How can I add servers automatically when the load grows?",
         (("autoscaling", "An autoscaling group launches new instances when average CPU load "
           "stays above the target you set."),)),
    Fact("q38", ("numeric", "lexical"),
         "What is the first response time for urgent tickets on the Business plan?",
         (("response-times", "On the Business support plan, the first response time for urgent "
           "tickets is one hour."),)),
    Fact("q39", ("no-answer",), "What is the carbon footprint of the Frankfurt data centre?", ()),
    Fact("q40", ("policy", "paraphrase"),
         "Can I take all my data with me if I move to another provider?",
         (("data-export", "To export all your data, request an archive under Settings and "
           "download it within 48 hours."),)),
)
# fmt: on
