from django.contrib import admin
from django.urls import include, path

from judging.web.login import answer_429_when_locked

urlpatterns = [
    # the admin's own login view, answering 429 when its (throttled) form refused an attempt
    path("admin/login/", answer_429_when_locked(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("judging.api.urls")),
    path("", include("judging.web.urls")),
]

# Under /api/ a request refused before any view, a refusal, a URL that matches nothing and a
# server error answer in the API's one error shape; elsewhere the site's error pages.
handler400 = "judging.api.errors.bad_request"
handler403 = "judging.api.errors.permission_denied"
handler404 = "judging.api.errors.not_found"
handler500 = "judging.api.errors.server_error"
